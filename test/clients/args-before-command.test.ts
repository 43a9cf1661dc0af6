/**
 * An args list written before the command key, empty or not, in every format: protect then unprotect gives back
 * the original bytes. An empty `args = []` right before the command used to read, once protected, exactly like
 * the args property protect adds to an entry that had none, and unprotect deleted it (real Codex files).
 */
import { describe, expect, test } from 'vitest';
import { commandShape } from '../../proxy-core/src/clients/entries.js';
import { protectText, unprotectText } from '../../proxy-core/src/clients/edit.js';
import { syntaxFor } from '../../proxy-core/src/clients/formats/index.js';
import { getAt } from '../../proxy-core/src/clients/docpath.js';
import type { ClientId, DocPath, Format } from '../../proxy-core/src/clients/types.js';
import { unwrap } from '../../proxy-core/src/clients/wrapped.js';
import { TEST_LAUNCHER } from '../helpers/client-home.js';

interface Case {
  format: Format;
  client: ClientId;
  path: DocPath;
  text: string;
}

const S = ['mcpServers', 'srv'];
const CODEX = ['mcp_servers', 'srv'];
const GOOSE = ['extensions', 'srv'];
const CONTINUE = ['mcpServers', 0];

/** [title, case]; each layout once with empty args and once with args. */
const CASES: [string, Case][] = [
  // TOML (Codex): the reported file, then variants
  ['toml table, args = [] first (node_repl)', { format: 'toml', client: 'codex', path: CODEX, text: '[mcp_servers.srv]\nargs = []\ncommand = "/usr/bin/node_repl"\n' }],
  ['toml table, args first', { format: 'toml', client: 'codex', path: CODEX, text: '[mcp_servers.srv]\nargs = ["--stdio"]\ncommand = "/usr/bin/node_repl"\n' }],
  ['toml table, args = [] first, CRLF and indent', { format: 'toml', client: 'codex', path: CODEX, text: '[mcp_servers.srv]\r\n  args = []\r\n  command = "x"\r\n' }],
  ['toml table, args = [ ] first (space inside)', { format: 'toml', client: 'codex', path: CODEX, text: '[mcp_servers.srv]\nargs = [ ]\ncommand = "x"\n' }],
  ['toml table, args = [] first, then more keys', { format: 'toml', client: 'codex', path: CODEX, text: '[mcp_servers.srv]\nargs = []\ncommand = "x"\nenv = { A = "1" }\n\n[mcp_servers.other]\nargs = []\ncommand = "y"\n' }],
  ['toml inline table, args = [] first', { format: 'toml', client: 'codex', path: CODEX, text: 'mcp_servers = { srv = { args = [], command = "x" } }\n' }],
  ['toml inline table, args first', { format: 'toml', client: 'codex', path: CODEX, text: 'mcp_servers = { srv = { args = ["a"], command = "x" } }\n' }],
  ['toml dotted keys, args = [] first', { format: 'toml', client: 'codex', path: CODEX, text: '[mcp_servers]\nsrv.args = []\nsrv.command = "x"\n' }],
  ['toml dotted keys, args first', { format: 'toml', client: 'codex', path: CODEX, text: '[mcp_servers]\nsrv.args = ["a", "b"]\nsrv.command = "x"\n' }],
  // JSON / JSONC
  ['json, "args": [] first on one line', { format: 'json', client: 'cursor', path: S, text: '{"mcpServers": {"srv": {"args": [], "command": "x"}}}' }],
  ['json, args first on one line', { format: 'json', client: 'cursor', path: S, text: '{"mcpServers": {"srv": {"args": ["-y", "p"], "command": "npx"}}}' }],
  ['json, "args": [] first, pretty', { format: 'json', client: 'claude-desktop', path: S, text: '{\n  "mcpServers": {\n    "srv": {\n      "args": [],\n      "command": "x"\n    }\n  }\n}\n' }],
  ['json, args first, pretty', { format: 'json', client: 'claude-desktop', path: S, text: '{\n  "mcpServers": {\n    "srv": {\n      "args": ["a"],\n      "command": "x"\n    }\n  }\n}\n' }],
  ['jsonc, "args": [] first with a comment', { format: 'jsonc', client: 'cursor', path: S, text: '{"mcpServers": {"srv": {"args": [], /* c */ "command": "x",}}}' }],
  ['jsonc, "args":[] first, no spaces', { format: 'jsonc', client: 'cursor', path: S, text: '{"mcpServers":{"srv":{"args":[],"command":"x"}}}' }],
  ['zed legacy, args: [] first', { format: 'jsonc', client: 'zed', path: ['context_servers', 'srv'], text: '{"context_servers": {"srv": {"command": {"args": [], "path": "/bin/s"}}}}' }],
  // YAML: Goose (cmd/args)
  ['goose, args: [] before cmd', { format: 'yaml', client: 'goose', path: GOOSE, text: 'extensions:\n  srv:\n    args: []\n    cmd: /usr/bin/node_repl\n    enabled: true\n    type: stdio\n' }],
  ['goose, flow args before cmd', { format: 'yaml', client: 'goose', path: GOOSE, text: 'extensions:\n  srv:\n    args: [mysql-mcp, --verbose]\n    cmd: uvx\n    type: stdio\n' }],
  ['goose, block args before cmd', { format: 'yaml', client: 'goose', path: GOOSE, text: 'extensions:\n  srv:\n    args:\n    - -y\n    - pkg\n    cmd: npx\n    type: stdio\n' }],
  ['goose flow mapping, args: [] first', { format: 'yaml', client: 'goose', path: GOOSE, text: 'extensions:\n  srv: {args: [], cmd: x, type: stdio}\n' }],
  // YAML: Continue's list form
  ['continue list, args: [] before command', { format: 'yaml', client: 'continue', path: CONTINUE, text: 'mcpServers:\n  - name: srv\n    args: []\n    command: x\n' }],
  ['continue list, args before command', { format: 'yaml', client: 'continue', path: CONTINUE, text: 'mcpServers:\n  - name: srv\n    args: [a, "b"]\n    command: x\n' }],
  ['continue list, args: [] right after the dash', { format: 'yaml', client: 'continue', path: CONTINUE, text: 'mcpServers:\n  - args: []\n    command: x\n    name: srv\n' }],
  ['continue list, block args right after the dash', { format: 'yaml', client: 'continue', path: CONTINUE, text: 'mcpServers:\n  - args:\n      - a\n    command: x\n    name: srv\n' }],
  ['continue flow list, args: [] first', { format: 'yaml', client: 'continue', path: CONTINUE, text: 'mcpServers: [{args: [], command: x, name: srv}]\n' }],
];

function target(c: Case) {
  const syntax = syntaxFor(c.format);
  return { syntax, entryPath: c.path, shape: commandShape(c.client, getAt(syntax.parse(c.text), c.path)) };
}

describe('args before the command: protect, then unprotect, gives back the same bytes', () => {
  test.each(CASES)('%s', (_title, c) => {
    const t = target(c);
    const wrapped = protectText(c.text, { ...t, launcher: TEST_LAUNCHER, name: 'srv', client: c.client });
    // protected as expected: the launcher, and the original command line after `--`
    const obj = getAt(t.syntax.parse(wrapped), [...c.path, ...t.shape.base]) as Record<string, unknown>;
    const before = getAt(t.syntax.parse(c.text), [...c.path, ...t.shape.base]) as Record<string, unknown>;
    const un = unwrap({ command: String(obj[t.shape.commandKey]), args: (obj[t.shape.argsKey] as unknown[]).map(String) });
    expect(un?.original).toEqual({ command: before[t.shape.commandKey], args: (before[t.shape.argsKey] as unknown[]).map(String) });
    // idempotent, and restored byte for byte
    expect(protectText(wrapped, { ...t, launcher: TEST_LAUNCHER, name: 'srv', client: c.client })).toBe(wrapped);
    const restored = unprotectText(wrapped, target({ ...c, text: wrapped }));
    expect(restored).toBe(c.text);
  });
});

test('an entry without args still gets its args property removed again (the two cases stay apart)', () => {
  const c: Case = { format: 'toml', client: 'codex', path: CODEX, text: '[mcp_servers.srv]\ncommand = "/usr/bin/node_repl"\n' };
  const wrapped = protectText(c.text, { ...target(c), launcher: TEST_LAUNCHER, name: 'srv', client: 'codex' });
  expect(wrapped).toMatch(/^args = \["/m);
  expect(unprotectText(wrapped, target(c))).toBe(c.text);
  const empty: Case = { ...c, text: '[mcp_servers.srv]\nargs = []\ncommand = "/usr/bin/node_repl"\n' };
  const wrappedEmpty = protectText(empty.text, { ...target(empty), launcher: TEST_LAUNCHER, name: 'srv', client: 'codex' });
  expect(wrappedEmpty).toMatch(/^args = \[ "/m);
  expect(wrappedEmpty).not.toBe(wrapped);
});
