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

/**
 * The last tree built, for the next call on the same text: wrapping every entry of a big file locates each
 * entry in the same text, and building the tree once per entry would cost the file's size each time. Dropped
 * on the next turn of the event loop, so a big file's tree is not kept.
 */
let lastTree: { text: string; strict: boolean; root: Node | undefined } | null = null;

function tree(text: string, strict: boolean): Node | undefined {
  if (lastTree && lastTree.strict === strict && lastTree.text === text) return lastTree.root;
  const root = buildTree(text, strict);
  if (!lastTree) setImmediate(() => (lastTree = null)).unref();
  lastTree = { text, strict, root };
  return root;
}

function buildTree(text: string, strict: boolean): Node | undefined {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: !strict, disallowComments: strict, allowEmptyContent: true });
  const first = errors[0];
  if (first) throw new ConfigParseError(`${printParseErrorCode(first.error)} at ${lineCol(text, first.offset)}`);
  return root;
}

/** An object node's properties by key (built once per node: a big map of servers is looked up once per entry). */
const indexes = new WeakMap<Node, Map<unknown, Node[]>>();
function keyIndex(obj: Node): Map<unknown, Node[]> {
  let m = indexes.get(obj);
  if (!m) {
    m = new Map();
    for (const p of obj.children ?? []) {
      const k = p.children?.[0]?.value;
      const list = m.get(k);
      if (list) list.push(p);
      else m.set(k, [p]);
    }
    indexes.set(obj, m);
  }
  return m;
}

/** The one property named `key` of an object node; refuses duplicates, which parsers resolve differently. */
function property(obj: Node, key: string, where: string): Node | undefined {
  if (obj.type !== 'object') throw new ConfigEditError(`${where} is not an object`);
  const found = keyIndex(obj).get(key) ?? [];
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
