/**
 * The UI's requests against a real daemon (one for the file), through the protocol's typed client: a held write
 * to the real filesystem server with its deadline, scopes and preview; an "always" approval scoped to a folder
 * that then runs what it names and holds the rest (the files on disk are the ground truth); the ticket timeout
 * reaching a connected wrapper; protect and unprotect of a client config in a temp HOME; a check-up.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Ticket } from '../../proxy-core/src/protocol/api.js';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, cli, cliJson, connectWrapped, FILESYSTEM, ROOT, tempDir, untilBroker, waitForSessions } from '../helpers/airlock.js';
import { startBroker } from '../helpers/e2e.js';

let data: string;
let home: string;
let root: string;
let notes: string;
let config: string;
let broker: BrokerClient;
let fs: Client;
const SAFETY = join(ROOT, 'test', 'fixtures', 'servers', 'inspect-safety.mjs');
const CONFIG_TEXT = (record: string) =>
  JSON.stringify(
    {
      mcpServers: {
        notes: { command: 'node', args: ['notes.js', '--api-key', 's3cret'] },
        safety: { command: process.execPath, args: [SAFETY], env: { INSPECT_RECORD: record } },
      },
    },
    null,
    2,
  ) + '\n';
let record: string;

beforeAll(async () => {
  data = tempDir();
  home = tempDir('al-home-');
  root = realpathSync(tempDir('al-fs-'));
  notes = join(root, 'notes');
  mkdirSync(notes);
  mkdirSync(join(root, 'private'));
  symlinkSync(join(root, 'private'), join(notes, 'out'));
  mkdirSync(join(home, '.cursor'));
  config = join(home, '.cursor', 'mcp.json');
  record = join(home, 'calls.jsonl');
  writeFileSync(config, CONFIG_TEXT(record));
  ({ broker } = await startBroker({ home: data, env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' } }));
  // the filesystem server behind a wrapper whose working directory is the served folder
  ({ client: fs } = await connectWrapped({ home: data, server: 'filesystem', command: process.execPath, args: [FILESYSTEM, root], cwd: root }));
  await waitForSessions(data, 1);
});
afterAll(cleanup);

/** The next pending ticket for a tool, in full (deadline, scopes). */
function nextTicket(tool: string): Promise<Ticket> {
  return untilBroker(data, (e) => e.type === 'ticket-created', async (c) => (await c.call('pending', {})).find((t) => t.tool === tool), 8000, `a ticket for ${tool}`);
}

describe('held file writes', () => {
  test('a ticket with its deadline, scopes and preview; approved always under the folder: the next write there runs, one outside is held', async () => {
    const first = fs.callTool({ name: 'write_file', arguments: { path: 'notes/today.md', content: 'hello\n' } });
    const t = await nextTicket('write_file');
    expect(t.expiresAt).toBe(t.createdAt + 120_000);
    expect(t.scopes).toEqual([{ label: `path under ${notes}`, args: [{ arg: 'path', kind: 'path', glob: `${notes}/**` }] }]);
    const preview = await broker.call('ticket.preview', { id: t.id });
    expect(preview).toMatchObject({ kind: 'file', path: join(notes, 'today.md'), exists: false, added: 1, removed: 0, truncated: false, caveat: expect.stringMatching(/relative path/) });
    expect(preview.kind === 'file' && preview.diff).toContain('+hello\n');

    await expect(broker.call('approve', { id: t.id, remember: 'once', args: t.scopes![0]!.args })).rejects.toMatchObject({ code: 'bad-request' });
    await broker.call('approve', { id: t.id, remember: 'always', args: t.scopes![0]!.args });
    expect((await first).isError).toBeFalsy();
    expect(readFileSync(join(notes, 'today.md'), 'utf8')).toBe('hello\n');

    // under the folder: no ticket, it runs at once
    const inside = await fs.callTool({ name: 'write_file', arguments: { path: join(notes, 'tomorrow.md'), content: 'later\n' } });
    expect(inside.isError).toBeFalsy();
    expect(readFileSync(join(notes, 'tomorrow.md'), 'utf8')).toBe('later\n');

    // out of it through a symlink: held, previewed as the real file, denied, not written
    writeFileSync(join(root, 'private', 'x.txt'), 'secret\n');
    const outside = fs.callTool({ name: 'write_file', arguments: { path: join(notes, 'out', 'x.txt'), content: 'overwritten\n' } });
    const held = await nextTicket('write_file');
    expect(await broker.call('ticket.preview', { id: held.id })).toMatchObject({ kind: 'file', path: join(root, 'private', 'x.txt'), exists: true, added: 1, removed: 1 });
    await broker.call('deny', { id: held.id });
    expect((await outside).isError).toBe(true);
    expect(readFileSync(join(root, 'private', 'x.txt'), 'utf8')).toBe('secret\n');

    // an edit, previewed against the file on disk
    const edit = fs.callTool({ name: 'edit_file', arguments: { path: join(root, 'private', 'x.txt'), edits: [{ oldText: 'secret', newText: 'public' }] } });
    const e = await nextTicket('edit_file');
    const diff = await broker.call('ticket.preview', { id: e.id });
    expect(diff).toMatchObject({ kind: 'file', added: 1, removed: 1 });
    expect(diff.kind === 'file' && diff.diff).toContain('-secret\n+public\n');
    await broker.call('deny', { id: e.id });
    await edit;
    await expect(broker.call('ticket.preview', { id: e.id })).rejects.toMatchObject({ code: 'not-pending' });

    // the catalog knows the file tools (built in for this server) and the rule that now applies
    const catalog = await broker.call('catalog', { server: 'filesystem' });
    const write = catalog.find((tool) => tool.name === 'write_file')!;
    expect(write.fileTool).toEqual({ server: 'filesystem', tool: 'write_file', kind: 'write', pathArg: 'path', contentArg: 'content', builtIn: true });
    expect(write.rules).toEqual([expect.objectContaining({ action: 'allow', args: t.scopes![0]!.args })]);
    expect((await broker.call('file-tools.list', {})).map((f) => f.tool)).toEqual(['edit_file', 'write_file']);
  });

  test('the ticket timeout is a setting: it reaches the connected wrapper and the next ticket', async () => {
    const listed = await broker.call('settings.list', {});
    expect(listed.find((s) => s.key === 'ticket-timeout')).toMatchObject({ value: '120', values: { min: 5, max: 86400 } });
    await broker.call('settings.set', { key: 'ticket-timeout', value: '300' });
    const status = await broker.call('status', {});
    expect(status.ticketTimeoutSeconds).toBe(300);
    const { answer } = await broker.call('wrapper.request', { sessionId: status.sessions[0]!.id, method: 'wrapper.status' });
    expect(answer).toMatchObject({ ticketTimeoutSeconds: 300 });
    const call = fs.callTool({ name: 'write_file', arguments: { path: join(root, 'private', 'y.txt'), content: 'y' } });
    const t = await nextTicket('write_file');
    expect(t.expiresAt! - t.createdAt).toBe(300_000);
    await broker.call('deny', { id: t.id });
    await call;
    expect(existsSync(join(root, 'private', 'y.txt'))).toBe(false);
  });
});

describe('the CLI', () => {
  test('approve --always --arg scopes the rule; --arg alone is a usage error; file-tools set, list, remove', async () => {
    const call = fs.callTool({ name: 'write_file', arguments: { path: join(root, 'private', 'z.txt'), content: 'z' } });
    const t = await nextTicket('write_file');
    expect((await cli(data, ['pending'])).stdout).toContain(`path under ${root}/private: airlock approve ${t.id} --always --arg 'path=${root}/private/**'`);
    expect((await cli(data, ['approve', t.id, '--arg', `path=${root}/private/**`])).code).toBe(2);
    const ok = await cli(data, ['approve', t.id, '--always', '--arg', `path=${root}/private/**`]);
    expect(ok).toMatchObject({ code: 0, stdout: expect.stringContaining(`when path under ${root}/private/**`) });
    expect((await call).isError).toBeFalsy();
    expect((await broker.call('rules.list', {})).at(-1)).toMatchObject({ action: 'allow', server: 'filesystem', tool: 'write_file', args: [{ arg: 'path', kind: 'path', glob: `${root}/private/**` }] });

    expect((await cli(data, ['file-tools', 'set', 'mail', 'save', 'write', '--path-arg', 'file', '--content-arg', 'body'])).code).toBe(0);
    const listed = await cliJson<{ server: string; tool: string; builtIn?: boolean }[]>(data, ['file-tools']);
    expect(listed).toContainEqual({ server: 'mail', tool: 'save', kind: 'write', pathArg: 'file', contentArg: 'body' });
    expect(listed).toContainEqual(expect.objectContaining({ server: 'filesystem', tool: 'write_file', builtIn: true }));
    expect((await cli(data, ['file-tools', 'set', 'mail', 'save', 'append', '--path-arg', 'f', '--content-arg', 'b'])).code).toBe(2);
    expect((await cli(data, ['file-tools', 'remove', 'mail', 'save'])).code).toBe(0);
    expect((await cli(data, ['file-tools', 'remove', 'mail', 'save'])).stderr).toMatch(/no file tool save/);
  });
});

describe("the clients' configs", () => {
  test('listed, protected and unprotected through the broker, journaled, the file restored byte for byte', async () => {
    const before = readFileSync(config, 'utf8');
    const cursor = (await broker.call('clients.list', {})).find((c) => c.client === 'cursor')!;
    expect(cursor.locations[0]!.servers.map((s) => [s.name, s.protected, s.args])).toEqual([
      ['notes', false, ['notes.js', '--api-key', '<redacted>']],
      ['safety', false, [SAFETY]],
    ]);
    const report = await broker.call('clients.protect', { client: 'cursor', servers: ['notes'] });
    expect(report).toMatchObject({ outcomes: [{ server: 'notes', result: 'protected', path: config }], restart: 'Restart Cursor (or reload its MCP servers) to apply.', warnings: [] });
    const wrapped = JSON.parse(readFileSync(config, 'utf8')) as { mcpServers: { notes: { args: string[] } } };
    expect(wrapped.mcpServers.notes.args).toEqual(expect.arrayContaining(['wrap', '--name', 'notes', '--client', 'cursor', '--home', data, 'node', 'notes.js']));
    const after = (await broker.call('clients.list', {})).find((c) => c.client === 'cursor')!;
    expect(after.locations[0]!.servers[0]).toMatchObject({ name: 'notes', protected: true, wrappedAs: 'notes' });
    const events = (await broker.call('events', { limit: 20 })).events;
    expect(events.find((e) => e.type === 'server-protected')).toMatchObject({ server: 'notes', detail: { client: 'cursor', via: 'api' } });

    expect(await broker.call('clients.unprotect', { client: 'cursor', servers: 'all' })).toMatchObject({ outcomes: [{ server: 'notes', result: 'unprotected' }, { server: 'safety', result: 'unchanged' }] });
    expect(readFileSync(config, 'utf8')).toBe(before);
    await expect(broker.call('clients.protect', { client: 'cursor', servers: ['ghost'] })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/no server "ghost"/) });
  });

  test('a check-up of a configured server: read-only tools only, the report as `airlock inspect --json` gives it', async () => {
    const report = await broker.call('inspect', { client: 'cursor', server: 'safety', timeoutSeconds: 20 }, 60_000);
    expect(report.server.name).toBe('safety-fixture');
    expect(report.tools.map((t) => t.name)).toEqual(['read_status', 'search', 'add_note', 'drop_table', 'send_email']);
    expect(report.summary.executed).toBe(2);
    const called = readFileSync(record, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { tool: string }).tool);
    expect([...new Set(called)]).toEqual(['read_status', 'search']);
    await expect(broker.call('inspect', { client: 'cursor', server: 'ghost' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/no server "ghost"/) });
  });
});
