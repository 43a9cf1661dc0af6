/** Text-level protect/unprotect on awkward layouts: each must round-trip exactly or be refused, never mangled. */
import { describe, expect, test } from 'vitest';
import { commandShape } from '../../../proxy-core/src/clients/entries.js';
import { protectText, unprotectText } from '../../../proxy-core/src/clients/edit.js';
import { syntaxFor } from '../../../proxy-core/src/clients/formats/index.js';
import { ConfigEditError, ConfigParseError } from '../../../proxy-core/src/clients/formats/syntax.js';
import { getAt } from '../../../proxy-core/src/clients/docpath.js';
import type { ClientId, DocPath, Format } from '../../../proxy-core/src/clients/types.js';
import { unwrap } from '../../../proxy-core/src/clients/wrapped.js';
import { TEST_LAUNCHER } from '../../helpers/client-home.js';

interface Case {
  title: string;
  format: Format;
  text: string;
  path: DocPath;
  client?: ClientId;
}

function target(c: Case) {
  const syntax = syntaxFor(c.format);
  const entry = getAt(syntax.parse(c.text), c.path);
  return { syntax, entryPath: c.path, shape: commandShape(c.client ?? 'cursor', entry) };
}

function protect(c: Case, text = c.text): string {
  return protectText(text, { ...target(c), launcher: TEST_LAUNCHER, name: 'srv', client: c.client ?? 'cursor' });
}

function entryCommand(c: Case, text: string): { command: unknown; args: unknown } {
  const t = target(c);
  const obj = getAt(t.syntax.parse(text), [...c.path, ...t.shape.base]) as Record<string, unknown>;
  return { command: obj[t.shape.commandKey], args: obj[t.shape.argsKey] };
}

const S = ['mcpServers', 'srv'];

const ROUND_TRIPS: Case[] = [
  { title: 'json: no args property', format: 'json', text: '{"mcpServers": {"srv": {"command": "x"}}}', path: S },
  { title: 'json: empty args', format: 'json', text: '{"mcpServers": {"srv": {"command": "x", "args": []}}}', path: S },
  { title: 'json: empty args with space', format: 'json', text: '{"mcpServers": {"srv": {"command": "x", "args": [ ]}}}', path: S },
  { title: 'json: empty args over lines', format: 'json', text: '{"mcpServers": {"srv": {\n  "command": "x",\n  "args": [\n  ]\n}}}\n', path: S },
  { title: 'json: args before command', format: 'json', text: '{"mcpServers": {"srv": {"args": ["-y", "p"], "command": "npx"}}}', path: S },
  { title: 'json: escaped command kept as written', format: 'json', text: '{"mcpServers": {"srv": {"command": "C:\\\\tools\\\\s\\u0065rver.exe", "args": ["a"]}}}', path: S },
  { title: 'json: unicode and quotes in args', format: 'json', text: '{"mcpServers": {"srv": {"command": "node", "args": ["--msg=\\"héllo\\" ✓", "\\u0000"]}}}', path: S },
  { title: 'json: original args contain --', format: 'json', text: '{"mcpServers": {"srv": {"command": "npm", "args": ["exec", "--", "pkg", "--", "x"]}}}', path: S },
  {
    title: 'jsonc: comments inside and around args, trailing commas',
    format: 'jsonc',
    text: '{\n  "mcpServers": {\n    "srv": {\n      "command": /* c0 */ "npx", // c1\n      "args": [ // c2\n        // c3\n        "-y", /* c4 */\n        "pkg", // c5\n      ],\n    },\n  },\n}\n',
    path: S,
  },
  { title: 'jsonc: CRLF and tabs', format: 'jsonc', text: '{\r\n\t"mcpServers": {\r\n\t\t"srv": {\r\n\t\t\t"command": "x"\r\n\t\t}\r\n\t}\r\n}\r\n', path: S },
  { title: 'jsonc: zed legacy nested command', format: 'jsonc', client: 'zed', text: '{"context_servers": {"srv": {"command": {"path": "/bin/s", "args": ["--stdio"], "env": {}}}}}', path: ['context_servers', 'srv'] },
  { title: 'toml: table, no args', format: 'toml', text: '[mcp_servers.srv]\ncommand = "x"\n', path: ['mcp_servers', 'srv'] },
  { title: 'toml: table, indented keys, CRLF', format: 'toml', text: '[mcp_servers.srv]\r\n  command = "x"\r\n  env = { A = "1" }\r\n', path: ['mcp_servers', 'srv'] },
  { title: 'toml: empty array', format: 'toml', text: '[mcp_servers.srv]\ncommand = "x"\nargs = []\n', path: ['mcp_servers', 'srv'] },
  { title: 'toml: multi-line array with comments', format: 'toml', text: "[mcp_servers.srv]\ncommand = 'x'\nargs = [\n  # first\n  'a', # one\n  \"b\",\n]\n", path: ['mcp_servers', 'srv'] },
  { title: 'toml: dotted keys without args', format: 'toml', text: '[mcp_servers]\nsrv.command = "x"\nsrv.cwd = "/"\n', path: ['mcp_servers', 'srv'] },
  { title: 'toml: inline table without args', format: 'toml', text: 'mcp_servers = { srv = { command = "x" } }\n', path: ['mcp_servers', 'srv'] },
  { title: 'toml: quoted server name', format: 'toml', text: '[mcp_servers."my.srv"]\ncommand = "x"\nargs = ["1"]\n', path: ['mcp_servers', 'my.srv'] },
  { title: 'yaml: block list, no args', format: 'yaml', text: 'mcpServers:\n  - name: srv\n    command: x\n', path: ['mcpServers', 0] },
  { title: 'yaml: command first after dash', format: 'yaml', text: 'mcpServers:\n  - command: x # c\n    name: srv\n', path: ['mcpServers', 0] },
  { title: 'yaml: flow mapping entry', format: 'yaml', text: 'mcpServers:\n  - {name: srv, command: x}\n', path: ['mcpServers', 0] },
  { title: 'yaml: flow mapping with args', format: 'yaml', text: 'mcpServers: [{name: srv, command: x, args: [a, b]}]\n', path: ['mcpServers', 0] },
  { title: 'yaml: block args with comments between', format: 'yaml', text: 'mcpServers:\n  - name: srv\n    command: npx\n    args:\n      # leading\n      - -y # yes\n\n      - "pkg"\n    env: {A: b}\n', path: ['mcpServers', 0] },
  { title: 'yaml: numbers and booleans in args', format: 'yaml', text: 'mcpServers:\n  - name: srv\n    command: srv\n    args: [--port, 8080, --debug, true]\n', path: ['mcpServers', 0] },
  { title: 'yaml: CRLF, unindented block list', format: 'yaml', text: 'extensions:\r\n  srv:\r\n    args:\r\n    - a\r\n    cmd: x\r\n    type: stdio\r\n', path: ['extensions', 'srv'], client: 'goose' },
  { title: 'yaml: single-quoted command', format: 'yaml', text: "mcpServers:\n  - name: srv\n    command: 'C:\\tools\\x.exe'\n    args: ['it''s']\n", path: ['mcpServers', 0] },
];

describe('round trip', () => {
  test.each(ROUND_TRIPS)('$title', (c) => {
    const before = entryCommand(c, c.text);
    const wrapped = protect(c);
    expect(wrapped).not.toBe(c.text);
    const now = entryCommand(c, wrapped);
    expect(now.command).toBe(TEST_LAUNCHER.command);
    const u = unwrap({ command: String(now.command), args: (now.args as unknown[]).map(String) });
    expect(u?.original.command).toBe(before.command);
    expect(u?.name).toBe('srv');
    // Idempotent both ways.
    expect(protect(c, wrapped)).toBe(wrapped);
    const restored = unprotectText(wrapped, target(c));
    expect(restored).toBe(c.text);
    expect(unprotectText(restored, target(c))).toBe(restored);
  });
});

describe('restores meaning when the file was reformatted after protect', () => {
  test('json rewritten by another program (as Claude Desktop does)', () => {
    const c: Case = { title: '', format: 'json', text: '{"mcpServers": {"srv": {"command": "x"}}}', path: S };
    const reformatted = JSON.stringify(JSON.parse(protect(c)), null, 2);
    const restored = unprotectText(reformatted, target(c));
    expect(JSON.parse(restored)).toEqual({ mcpServers: { srv: { command: 'x', args: [] } } });
  });
  test('yaml block list emptied back to []', () => {
    const c: Case = { title: '', format: 'yaml', text: 'mcpServers:\n  - name: srv\n    command: x\n    args:\n      - "/l.js"\n      - wrap\n      - --name\n      - srv\n      - --\n      - airlock-y\n', path: ['mcpServers', 0] };
    const wrapped = c.text.replace('command: x', 'command: /opt/airlock/node');
    const restored = unprotectText(wrapped, target(c));
    expect(syntaxFor('yaml').parse(restored)).toEqual({ mcpServers: [{ name: 'srv', command: 'airlock-y', args: [] }] });
  });
  test('entry wrapped by another launcher (packaged app)', () => {
    const c: Case = {
      title: '',
      format: 'json',
      text: '{"mcpServers": {"srv": {"command": "/Applications/Airlock.app/Contents/MacOS/airlock", "args": ["wrap", "--name", "srv", "--client", "cursor", "--", "npx", "-y", "p"]}}}',
      path: S,
    };
    expect(JSON.parse(unprotectText(c.text, target(c)))).toEqual({ mcpServers: { srv: { command: 'npx', args: ['-y', 'p'] } } });
  });
  test('yaml folded command is moved as a quoted string', () => {
    const c: Case = { title: '', format: 'yaml', text: 'mcpServers:\n  - name: srv\n    command: >-\n      npx\n    args: [a]\n', path: ['mcpServers', 0] };
    const wrapped = protect(c);
    const restored = unprotectText(wrapped, target(c));
    expect(syntaxFor('yaml').parse(restored)).toEqual(syntaxFor('yaml').parse(c.text));
  });
});

const REFUSED: (Case & { error: typeof ConfigEditError | typeof ConfigParseError; match: RegExp })[] = [
  { title: 'args is a string', format: 'json', text: '{"mcpServers": {"srv": {"command": "x", "args": "-y pkg"}}}', path: S, error: ConfigEditError, match: /args/ },
  { title: 'command is not a string', format: 'json', text: '{"mcpServers": {"srv": {"command": 42}}}', path: S, error: ConfigEditError, match: /command/ },
  { title: 'args hold an object', format: 'json', text: '{"mcpServers": {"srv": {"command": "x", "args": [{}]}}}', path: S, error: ConfigEditError, match: /args/ },
  { title: 'duplicate command key', format: 'jsonc', text: '{"mcpServers": {"srv": {"command": "x", "command": "y"}}}', path: S, error: ConfigEditError, match: /duplicate/ },
  { title: 'duplicate server name', format: 'jsonc', text: '{"mcpServers": {"srv": {"command": "x"}, "srv": {"command": "y"}}}', path: S, error: ConfigEditError, match: /duplicate/ },
  { title: 'comment in strict json', format: 'json', text: '{"mcpServers": {"srv": {"command": "x"}}} // hi', path: S, error: ConfigParseError, match: /line 1/ },
  { title: 'truncated jsonc', format: 'jsonc', text: '{"mcpServers": {"srv": {"command": "x"', path: S, error: ConfigParseError, match: /line/ },
  { title: 'bad toml', format: 'toml', text: '[mcp_servers.srv]\ncommand = "x\n', path: ['mcp_servers', 'srv'], error: ConfigParseError, match: /line/ },
  { title: 'duplicate toml key', format: 'toml', text: '[mcp_servers.srv]\ncommand = "x"\ncommand = "y"\n', path: ['mcp_servers', 'srv'], error: ConfigParseError, match: /already/ },
  { title: 'bad yaml', format: 'yaml', text: 'mcpServers:\n  - name: srv\n   command: [x\n', path: ['mcpServers', 0], error: ConfigParseError, match: /line/ },
];

describe('refused with a clear error', () => {
  test.each(REFUSED)('$title', (c) => {
    const syntax = syntaxFor(c.format);
    const run = () => {
      let entry: unknown;
      try {
        entry = getAt(syntax.parse(c.text), c.path);
      } catch {
        entry = undefined;
      }
      return protectText(c.text, { syntax, entryPath: c.path, shape: commandShape('cursor', entry), launcher: TEST_LAUNCHER, name: 'srv', client: 'cursor' });
    };
    expect(run).toThrow(c.error);
    expect(run).toThrow(c.match);
  });
});
