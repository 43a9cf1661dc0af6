/**
 * TOML (Codex). Located with toml-patch's concrete syntax tree, whose line/column positions are turned into
 * offsets; the edits themselves are plain text runs, so comments, spacing and quoting styles stay as written.
 */
import { parse, TomlDocument } from '@decimalturn/toml-patch';
import type { CommandShape, DocPath } from '../types.js';
import {
  ConfigEditError,
  ConfigParseError,
  eolOf,
  lineStart,
  type EntrySyntax,
  type FormatSyntax,
  type SeqSyntax,
} from './syntax.js';

interface Pos {
  line: number;
  column: number;
}
interface Loc {
  start: Pos;
  end: Pos;
}
/** The parts of toml-patch's CST this module reads (its node types are not exported). */
interface CstNode {
  type: string;
  loc: Loc;
  items?: CstNode[];
  item?: CstNode;
  key?: CstNode & { raw: string; value: string[] };
  value?: CstNode;
  raw?: string;
}

function parseError(err: unknown): ConfigParseError {
  const message = err instanceof Error ? err.message : String(err);
  // toml-patch puts "(line, column)" in its first line and the offending source in the next ones.
  const m = /\((\d+), (\d+)\)/.exec(message);
  const reason = message.split('\n').filter((l) => l.trim() !== '').pop() ?? 'invalid TOML';
  return new ConfigParseError(m ? `${reason} at line ${m[1]}, column ${Number(m[2]) + 1}` : reason);
}

function offsets(text: string): (p: Pos) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (p) => (starts[p.line - 1] ?? text.length) + p.column;
}

interface Found {
  kv: CstNode;
  inline: boolean;
}

/** Every key/value with its full dotted path, walking tables and inline tables. */
function collect(items: CstNode[], base: string[], inline: boolean, out: Map<string, Found>): void {
  for (const item of items) {
    if (item.type === 'KeyValue' && item.key && item.value) {
      const full = [...base, ...item.key.value];
      out.set(JSON.stringify(full), { kv: item, inline });
      if (item.value.type === 'InlineTable') {
        collect((item.value.items ?? []).map((i) => i.item!).filter(Boolean), full, true, out);
      }
    } else if (item.type === 'Table' && item.key?.item) {
      const key = (item.key.item as CstNode & { value: string[] }).value;
      collect(item.items ?? [], key, false, out);
    }
    // Arrays of tables ([[x]]) never hold MCP servers: leave them out so they cannot match.
  }
}

/** The TOML handler. */
export const tomlSyntax: FormatSyntax = {
  parse(text) {
    try {
      return parse(text);
    } catch (err) {
      throw parseError(err);
    }
  },
  locate(text, entryPath: DocPath, shape: CommandShape): EntrySyntax {
    let cst: CstNode[];
    try {
      parse(text);
      cst = new TomlDocument(text).cst as unknown as CstNode[];
    } catch (err) {
      throw parseError(err);
    }
    const at = offsets(text);
    const all = new Map<string, Found>();
    collect(cst, [], false, all);
    const base = [...entryPath, ...shape.base].map(String);
    const cmd = all.get(JSON.stringify([...base, shape.commandKey]));
    const args = all.get(JSON.stringify([...base, shape.argsKey]));
    const prop = (f: Found | undefined) =>
      f && { keyStart: at(f.kv.key!.loc.start), value: { start: at(f.kv.value!.loc.start), end: at(f.kv.value!.loc.end) } };
    let seq: SeqSyntax | null = null;
    const av = args?.kv.value;
    if (av?.type === 'InlineArray') {
      seq = {
        style: 'flow',
        open: at(av.loc.start) + 1,
        indent: '',
        span: { start: at(av.loc.start), end: at(av.loc.end) },
        items: (av.items ?? []).map((ii) => {
          const node = ii.item!;
          const start = at(node.loc.start);
          const end = at(node.loc.end);
          return { start, end, lead: start, value: text.slice(start, end) };
        }),
      };
    }
    // A dotted key (`github.command = ...` under [mcp_servers]) needs the same prefix on the new args key.
    let key = shape.argsKey;
    let separator = ', ';
    if (cmd) {
      const raw = cmd.kv.key!.raw;
      const last = /(?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*$/.exec(raw);
      key = (last ? raw.slice(0, last.index) : '') + shape.argsKey;
      if (!cmd.inline) {
        const keyStart = at(cmd.kv.key!.loc.start);
        const indent = text.slice(lineStart(text, keyStart), keyStart);
        if (!/^[ \t]*$/.test(indent)) throw new ConfigEditError('the command key does not start its line');
        separator = eolOf(text) + indent;
      }
    }
    return {
      command: prop(cmd),
      args: args ? { ...prop(args)!, seq } : undefined,
      newArgs: { key, assign: ' = ', separator },
      eol: eolOf(text),
    };
  },
  // JSON string syntax is valid TOML basic-string syntax, except lone surrogates, which TOML cannot hold at all.
  quote(value) {
    if (/[\uD800-\uDFFF]/.test(value.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))) {
      throw new ConfigEditError('a string with a lone surrogate cannot be written as TOML');
    }
    return JSON.stringify(value);
  },
};
