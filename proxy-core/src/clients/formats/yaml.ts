/**
 * YAML (Continue, Goose). Located with the `yaml` package's node ranges; edits are text runs, so comments,
 * quoting and indentation stay exactly as written.
 */
import { isMap, isPair, isScalar, isSeq, parseDocument, type Node as YamlNode, type Pair } from 'yaml';
import type { CommandShape, DocPath } from '../types.js';
import {
  ConfigEditError,
  ConfigParseError,
  eolOf,
  lineCol,
  lineStart,
  type EntrySyntax,
  type FormatSyntax,
  type SeqSyntax,
} from './syntax.js';

function document(text: string) {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const err = doc.errors[0];
  if (err) {
    throw new ConfigParseError(`${(err.message.split('\n')[0] ?? err.message).replace(/ at line \d+, column \d+:?$/, '')} at ${lineCol(text, err.pos[0])}`);
  }
  return doc;
}

/** A node's [start, valueEnd, nodeEnd], with valueEnd pulled back over the line break block scalars include. */
function range(node: YamlNode, text?: string): [number, number, number] {
  const r = node.range;
  if (!r) throw new ConfigEditError('a YAML node has no position');
  let end = r[1];
  if (text !== undefined) while (end > r[0] && /[\s]/.test(text[end - 1] ?? '')) end--;
  return [r[0], end, r[2]];
}

function pairOf(node: unknown, key: string, where: string): Pair | undefined {
  if (!isMap(node)) throw new ConfigEditError(`${where} is not a mapping`);
  const found = node.items.filter((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === key);
  if (found.length > 1) throw new ConfigEditError(`duplicate key "${key}" in ${where}`);
  return found[0] as Pair | undefined;
}

function seqSyntax(text: string, node: unknown): SeqSyntax | null {
  if (!isSeq(node)) return null;
  const [start, end] = range(node as YamlNode, text);
  const items = node.items.map((item) => {
    const [s, e] = range(item as YamlNode, text);
    let lead = s;
    if (!node.flow) {
      // The `- ` indicator precedes the item on its line; anything else is a layout we do not edit.
      let i = s - 1;
      while (i >= 0 && (text[i] === ' ' || text[i] === '\t')) i--;
      if (text[i] !== '-') throw new ConfigEditError('unusual YAML list layout (expected "- " before each item)');
      lead = i;
    }
    return { start: s, end: e, lead, value: isScalar(item) ? item.value : undefined };
  });
  let indent = '';
  const first = items[0];
  if (!node.flow && first) {
    indent = text.slice(lineStart(text, first.lead), first.lead);
    if (!/^ *$/.test(indent)) throw new ConfigEditError('unusual YAML list layout (list does not start its line)');
  }
  return { style: node.flow ? 'flow' : 'block', open: start + 1, indent, span: { start, end }, items };
}

/** The YAML handler. */
export const yamlSyntax: FormatSyntax = {
  parse(text) {
    return document(text).toJS({ maxAliasCount: 100 });
  },
  locate(text, entryPath: DocPath, shape: CommandShape): EntrySyntax {
    const doc = document(text);
    let node: unknown = doc.contents;
    let where = '(root)';
    for (const seg of [...entryPath, ...shape.base]) {
      if (typeof seg === 'number') {
        if (!isSeq(node) || !node.items[seg]) throw new ConfigEditError(`${where}[${seg}] not found`);
        node = node.items[seg];
      } else {
        const pair = pairOf(node, seg, where);
        if (!pair) throw new ConfigEditError(`${where}.${seg} not found`);
        node = pair.value;
      }
      where = `${where}.${String(seg)}`;
    }
    const map = node;
    const cmd = pairOf(map, shape.commandKey, where);
    const args = pairOf(map, shape.argsKey, where);
    const prop = (p: Pair | undefined) => {
      if (!p || !p.value) return undefined;
      const [vs, ve] = range(p.value as YamlNode, text);
      return { keyStart: range(p.key as YamlNode)[0], value: { start: vs, end: ve } };
    };
    const eol = eolOf(text);
    let separator = ', ';
    const command = prop(cmd);
    if (command && isMap(map) && !map.flow) {
      // A new key goes on its own line at the command key's column (which may follow a "- " list indicator).
      separator = eol + ' '.repeat(command.keyStart - lineStart(text, command.keyStart));
    }
    const argsProp = prop(args);
    return {
      command,
      args: argsProp ? { ...argsProp, seq: seqSyntax(text, args!.value) } : undefined,
      newArgs: { key: shape.argsKey, assign: ': ', separator },
      eol,
    };
  },
  // A JSON string is a valid YAML double-quoted scalar.
  quote: (value) => JSON.stringify(value),
};
