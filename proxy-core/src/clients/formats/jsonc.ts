/** JSON and JSON-with-comments: located with jsonc-parser's syntax tree, so comments and layout stay put. */
import { getNodeValue, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import type { CommandShape, DocPath } from '../types.js';
import {
  ConfigEditError,
  ConfigParseError,
  eolOf,
  lineCol,
  type EntrySyntax,
  type FormatSyntax,
  type PropertySyntax,
  type SeqSyntax,
} from './syntax.js';

function tree(text: string, strict: boolean): Node | undefined {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: !strict, disallowComments: strict, allowEmptyContent: true });
  const first = errors[0];
  if (first) throw new ConfigParseError(`${printParseErrorCode(first.error)} at ${lineCol(text, first.offset)}`);
  return root;
}

/** The one property named `key` of an object node; refuses duplicates, which parsers resolve differently. */
function property(obj: Node, key: string, where: string): Node | undefined {
  if (obj.type !== 'object') throw new ConfigEditError(`${where} is not an object`);
  const found = (obj.children ?? []).filter((p) => p.children?.[0]?.value === key);
  if (found.length > 1) throw new ConfigEditError(`duplicate key "${key}" in ${where}`);
  return found[0];
}

function child(node: Node, seg: string | number, where: string): Node {
  if (typeof seg === 'number') {
    const item = node.type === 'array' ? node.children?.[seg] : undefined;
    if (!item) throw new ConfigEditError(`${where}[${seg}] not found`);
    return item;
  }
  const value = property(node, seg, where)?.children?.[1];
  if (!value) throw new ConfigEditError(`${where}.${seg} not found`);
  return value;
}

function propertySyntax(prop: Node): PropertySyntax {
  const value = prop.children?.[1];
  if (!value) throw new ConfigEditError('property without a value');
  return { keyStart: prop.offset, value: { start: value.offset, end: value.offset + value.length } };
}

function seqSyntax(node: Node): SeqSyntax | null {
  if (node.type !== 'array') return null;
  return {
    style: 'flow',
    open: node.offset + 1,
    indent: '',
    span: { start: node.offset, end: node.offset + node.length },
    items: (node.children ?? []).map((c) => ({
      start: c.offset,
      end: c.offset + c.length,
      lead: c.offset,
      value: getNodeValue(c),
    })),
  };
}

/** A JSON (strict) or JSONC format handler. */
export function jsonSyntax(strict: boolean): FormatSyntax {
  return {
    parse(text) {
      const root = tree(text, strict);
      return root === undefined ? undefined : getNodeValue(root);
    },
    locate(text, entryPath: DocPath, shape: CommandShape): EntrySyntax {
      const root = tree(text, strict);
      if (!root) throw new ConfigEditError('the file is empty');
      let node = root;
      let where = '(root)';
      for (const seg of [...entryPath, ...shape.base]) {
        node = child(node, seg, where);
        where = `${where}.${String(seg)}`;
      }
      const cmd = property(node, shape.commandKey, where);
      const args = property(node, shape.argsKey, where);
      const argsValue = args?.children?.[1];
      return {
        command: cmd ? propertySyntax(cmd) : undefined,
        args: args && argsValue ? { ...propertySyntax(args), seq: seqSyntax(argsValue) } : undefined,
        newArgs: { key: JSON.stringify(shape.argsKey), assign: ': ', separator: ', ' },
        eol: eolOf(text),
      };
    },
    quote: (value) => JSON.stringify(value),
  };
}
