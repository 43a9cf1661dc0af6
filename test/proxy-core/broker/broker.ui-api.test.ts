/**
 * The broker's requests for the UI, without sockets: tickets with their deadline and scopes, approvals scoped by
 * arguments, the wrapper's cwd, previews, file tools, the richer catalog, settings and the ticket timeout, and
 * the clients' configs (in a temp HOME). Hostile input gets an error with a code, never a crash.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Broker, type BrokerOptions } from '../../../proxy-core/src/broker/broker.js';
import { Store } from '../../../proxy-core/src/broker/db/store.js';
import { SETTINGS } from '../../../proxy-core/src/protocol/settings.js';
import type { AskAnswer } from '../../../proxy-core/src/protocol/api.js';
import { WrapperMethod } from '../../../proxy-core/src/protocol/names.js';
import { TEST_LAUNCHER } from '../../helpers/client-home.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { channelPair } from '../../helpers/memory-channel.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function temp(prefix = 'al-ui-api-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function setup(opts: Partial<BrokerOptions> = {}) {
  const dir = temp();
  const store = new Store(join(dir, 'airlock.db'));
  cleanups.push(() => store.close());
  const clock = new FakeClock();
  const broker = new Broker({ presence: { required: false }, store, dataDir: dir, ackTimeoutMs: 1500, clock, ...opts });
  const [server, peer] = channelPair();
  broker.attach(server, 'ui');
  const ui = <T>(method: string, params: unknown = {}) => peer.request<T>(method, params);
  return { broker, clock, store, dir, ui };
}

/** A wrapper on an in-memory channel that acknowledges every push and keeps them. */
async function wrapper(broker: Broker, open: { server?: string; command?: string[]; cwd?: string } = {}) {
  const [end, peer] = channelPair();
  broker.attach(end, 'wrapper');
  const pushes: Record<string, unknown>[] = [];
  peer.setHandlers({
    notify: (method, params) => {
      if (method !== 'policy') return;
      pushes.push(params as Record<string, unknown>);
      peer.notify('policy.ack', { version: (params as { version: number }).version });
    },
  });
  const opened = await peer.request<{ ticketTimeoutSeconds: number }>(WrapperMethod.sessionOpen, {
    client: 'c',
    server: open.server ?? 'fs',
    command: open.command ?? ['x'],
    pid: 1,
    trustFlag: false,
    ...(open.cwd !== undefined ? { cwd: open.cwd } : {}),
  });
  const ask = (tool: string, args: Record<string, unknown>) =>
    peer.request<AskAnswer>(WrapperMethod.ask, { callId: `call-${Math.random()}`, tool, arguments: args, class: 'destructive', reasons: [] });
  return { peer, pushes, opened, ask };
}

async function held(broker: Broker, count = 1) {
  for (let i = 0; i < 50 && broker.pending().length < count; i++) await new Promise((r) => setImmediate(r));
  return broker.pending().at(-1)!;
}

describe('tickets for the UI', () => {
  test('a ticket says when it expires and which narrower scopes an always-allow may take', async () => {
    const { broker } = setup({ ticketTimeoutSeconds: 30 });
    const notes = join(temp(), 'notes');
    mkdirSync(notes);
    const w = await wrapper(broker);
    void w.ask('write_file', { path: join(notes, 'a.md'), content: 'x'.repeat(300) });
    const t = await held(broker);
    expect(t.expiresAt).toBe(t.createdAt + 30_000);
    expect(t.scopes).toEqual([{ label: `path under ${notes}`, args: [{ arg: 'path', kind: 'path', glob: `${notes}/**` }] }]);
  });

  test('approve with args: only with always; the rule carries them; checked as rules.add checks them', async () => {
    const { broker, ui } = setup();
    const w = await wrapper(broker);
    const answer = w.ask('write_file', { path: '/srv/notes/a.md' });
    const t = await held(broker);
    const args = [{ arg: 'path', kind: 'path', glob: '/srv/notes/**' }];
    await expect(ui('approve', { id: t.id, args })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/always/) });
    await expect(ui('approve', { id: t.id, remember: 'session', args })).rejects.toMatchObject({ code: 'bad-request' });
    await expect(ui('approve', { id: t.id, remember: 'always', args: [] })).rejects.toMatchObject({ code: 'bad-request' });
    for (const bad of [{ arg: 'path', kind: 'path', glob: 'notes/**' }, { arg: 'n', kind: 'range' }, { arg: 'n', kind: 'range', min: 5, max: 1 }, { arg: 'p', kind: 'nope' }]) {
      await expect(ui('approve', { id: t.id, remember: 'always', args: [bad] }), JSON.stringify(bad)).rejects.toMatchObject({ code: 'bad-request' });
      await expect(ui('rules.add', { action: 'deny', server: 'fs', tool: 't', args: [bad] }), JSON.stringify(bad)).rejects.toMatchObject({ code: 'bad-request' });
    }
    await ui('approve', { id: t.id, remember: 'always', args });
    expect(await answer).toMatchObject({ decision: 'allow', remember: 'always' });
    expect(broker.rules()).toEqual([expect.objectContaining({ action: 'allow', server: 'fs', tool: 'write_file', args })]);
    expect(w.pushes.at(-1)!.rules).toEqual(broker.rules());
  });

  test('a preview: not pending is not-pending; not a file tool is none; a relative path needs the wrapper cwd', async () => {
    const { broker, ui } = setup();
    await expect(ui('ticket.preview', { id: 'nope' })).rejects.toMatchObject({ code: 'not-pending' });
    const root = temp();
    writeFileSync(join(root, 'a.md'), 'old\n');
    const filesystem = ['node', '/x/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', root];
    const withCwd = await wrapper(broker, { command: filesystem, cwd: root });
    void withCwd.ask('write_file', { path: 'a.md', content: `${'new '.repeat(60)}\n` });
    const t1 = await held(broker, 1);
    expect(t1.scopes).toEqual([{ label: `path under ${root}`, args: [{ arg: 'path', kind: 'path', glob: `${root}/**` }] }]);
    expect(await ui('ticket.preview', { id: t1.id })).toMatchObject({ kind: 'file', path: join(root, 'a.md'), exists: true, added: 1, removed: 1 });
    // a cwd that is not absolute or holds a NUL is not kept; one past 4096 characters is refused with the open
    // (the filesystem server takes a relative path from its allowed folder, which needs no cwd when absolute;
    // one given relative does)
    for (const cwd of ['relative/dir', '/a\0b']) {
      const w = await wrapper(broker, { command: filesystem, cwd });
      void w.ask('write_file', { path: 'a.md', content: 'x' });
      const t = await held(broker, broker.pending().length + 1);
      expect(t.scopes).toBeUndefined();
      expect(await ui('ticket.preview', { id: t.id })).toMatchObject({ kind: 'file', path: join(root, 'a.md') });
      const r = await wrapper(broker, { command: [...filesystem.slice(0, 2), 'folder'], cwd });
      void r.ask('write_file', { path: 'a.md', content: 'x' });
      const t2 = await held(broker, broker.pending().length + 1);
      expect(await ui('ticket.preview', { id: t2.id })).toEqual({ kind: 'error', reason: expect.stringMatching(/allowed folders could not be read/) });
    }
    await expect(wrapper(broker, { cwd: `/${'x'.repeat(5000)}` })).rejects.toMatchObject({ code: 'bad-request' });
    const other = await wrapper(broker, { server: 'mail' });
    void other.ask('send', { to: 'x' });
    const t3 = await held(broker, broker.pending().length + 1);
    expect(await ui('ticket.preview', { id: t3.id })).toMatchObject({ kind: 'none' });
  });
});

describe('file tools', () => {
  test('declared ones are stored and journaled; the filesystem server has its own built in; a declaration wins', async () => {
    const { broker, ui, store } = setup();
    expect(await ui('file-tools.list')).toEqual([]);
    await wrapper(broker, { server: 'files', command: ['npx', '-y', '@modelcontextprotocol/server-filesystem@latest', '/tmp'] });
    expect(await ui('file-tools.list')).toEqual([
      { server: 'files', tool: 'edit_file', kind: 'edit', pathArg: 'path', contentArg: 'edits', builtIn: true },
      { server: 'files', tool: 'write_file', kind: 'write', pathArg: 'path', contentArg: 'content', builtIn: true },
    ]);
    const mine = { server: 'files', tool: 'write_file', kind: 'write', pathArg: 'file', contentArg: 'text' };
    expect(await ui('file-tools.set', mine)).toEqual(mine);
    await ui('file-tools.set', { server: 'notes', tool: 'save', kind: 'edit', pathArg: 'p', contentArg: 'changes' });
    expect(await ui('file-tools.list')).toEqual([
      { server: 'files', tool: 'edit_file', kind: 'edit', pathArg: 'path', contentArg: 'edits', builtIn: true },
      mine,
      { server: 'notes', tool: 'save', kind: 'edit', pathArg: 'p', contentArg: 'changes' },
    ]);
    expect(broker.events({ limit: 10 }).events.filter((e) => e.type === 'file-tool-set')).toHaveLength(2);

    for (const bad of [
      { ...mine, tool: 'a\u0007b' },
      { ...mine, pathArg: '   ' },
      { ...mine, contentArg: '' },
      { ...mine, contentArg: 'file' },
      { ...mine, kind: 'append' },
      { ...mine, builtIn: true },
    ]) {
      await expect(ui('file-tools.set', bad), JSON.stringify(bad)).rejects.toMatchObject({ code: 'bad-request' });
    }
    await expect(ui('file-tools.remove', { server: 'files', tool: 'edit_file' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/built in/) });
    await expect(ui('file-tools.remove', { server: 'nope', tool: 'x' })).rejects.toMatchObject({ code: 'not-found' });
    await ui('file-tools.remove', { server: 'files', tool: 'write_file' });
    expect((await ui<{ tool: string; builtIn?: boolean }[]>('file-tools.list')).filter((t) => t.tool === 'write_file')).toEqual([expect.objectContaining({ builtIn: true })]);

    // the built-in ones survive a restart: the server is known from its earlier sessions
    const again = new Broker({ presence: { required: false }, store, dataDir: '/unused', clock: new FakeClock() });
    expect(again.fileTools.list().map((t) => t.tool)).toEqual(['edit_file', 'write_file', 'save']);
  });
});

describe('catalog, settings, ticket timeout', () => {
  test('a catalog tool has its withdrawn claim, the rules that may apply in the order weighed, and its file tool', async () => {
    const { broker, ui, store } = setup();
    const w = await wrapper(broker, { server: 'fs' });
    await w.peer.request(WrapperMethod.catalogUpdate, {
      verdicts: [
        { name: 'read', class: 'read-only-unchecked', reasons: ['r'], declared: { readOnlyHint: true } },
        { name: 'write', class: 'destructive', reasons: [], declared: {} },
      ],
    });
    store.withdrawClaim('fs', 'read', 'resources/updated during a call');
    const allow = await broker.addRule({ action: 'allow', server: 'fs', tool: 'write' });
    const deny = await broker.addRule({ action: 'deny', server: '*', tool: 'wr*', client: 'other' });
    await broker.addRule({ action: 'ask', server: 'mail', tool: '*' });
    await ui('file-tools.set', { server: 'fs', tool: 'write', kind: 'write', pathArg: 'path', contentArg: 'content' });
    expect(await ui('catalog', { server: 'fs' })).toEqual([
      { name: 'read', class: 'read-only-unchecked', reasons: ['r'], declared: { readOnlyHint: true }, withdrawn: 'resources/updated during a call', rules: [] },
      { name: 'write', class: 'destructive', reasons: [], declared: {}, rules: [deny, allow], fileTool: { server: 'fs', tool: 'write', kind: 'write', pathArg: 'path', contentArg: 'content' } },
    ]);
  });

  test('settings.list: every setting with its value; ticket-timeout applies to new tickets and reaches wrappers', async () => {
    const { broker, ui } = setup();
    const w = await wrapper(broker);
    expect(w.opened.ticketTimeoutSeconds).toBe(120);
    const list = await ui<{ key: string; value: string }[]>('settings.list');
    expect(list.map((s) => s.key)).toEqual(Object.keys(SETTINGS));
    expect(list.find((s) => s.key === 'ticket-timeout')).toEqual({ key: 'ticket-timeout', value: '120', fallback: '120', values: { min: 5, max: 86400 }, help: expect.any(String) });
    expect(list.find((s) => s.key === 'auto-protect')).toMatchObject({ value: 'off', values: ['on', 'off'] });

    await expect(ui('settings.set', { key: 'ticket-timeout', value: '4' })).rejects.toMatchObject({ code: 'bad-request' });
    await ui('settings.set', { key: 'ticket-timeout', value: '45' });
    expect(w.pushes.at(-1)).toMatchObject({ ticketTimeoutSeconds: 45 });
    expect(broker.status().ticketTimeoutSeconds).toBe(45);
    expect(await ui('settings.get', { key: 'ticket-timeout' })).toEqual({ value: '45' });
    void w.ask('t', {});
    const t = await held(broker);
    expect(t.expiresAt! - t.createdAt).toBe(45_000);
  });

  test('the daemon flag is saved as the setting when the setting can hold it, and holds for the run when shorter', () => {
    const { store } = setup({ ticketTimeoutSeconds: 300 });
    expect(store.getSetting('ticket-timeout')).toBe('300');
    const short = new Broker({ presence: { required: false }, store, dataDir: '/unused', clock: new FakeClock(), ticketTimeoutSeconds: 1 });
    expect(short.status().ticketTimeoutSeconds).toBe(1);
    expect(store.getSetting('ticket-timeout')).toBe('300');
    expect(new Broker({ presence: { required: false }, store, dataDir: '/unused', clock: new FakeClock() }).status().ticketTimeoutSeconds).toBe(300);
  });
});

describe("clients' configs", () => {
  function cursorHome() {
    const home = temp('al-home-');
    mkdirSync(join(home, '.cursor'));
    const config = join(home, '.cursor', 'mcp.json');
    writeFileSync(config, '{\n  "mcpServers": {\n    "notes": { "command": "node", "args": ["notes.js", "--token", "s3cret"] }\n  }\n}\n');
    return { home, config, env: { HOME: home } };
  }

  test('list, protect (journaled, with the restart advice), unprotect; no launcher: protect refused, unprotect works', async () => {
    const { config, env } = cursorHome();
    const { broker, ui } = setup({ env, launcher: TEST_LAUNCHER });
    const list = await ui<{ client: string; found: boolean; locations: { path: string; servers: unknown[] }[] }[]>('clients.list');
    const cursor = list.find((c) => c.client === 'cursor')!;
    expect(cursor).toMatchObject({ found: true, locations: [{ path: config, scope: 'global', format: 'jsonc' }] });
    expect(cursor.locations[0]!.servers).toEqual([{ name: 'notes', transport: 'stdio', protected: false, protectable: true, command: 'node', args: ['notes.js', '--token', '<redacted>'], envKeys: [] }]);

    const report = await ui<{ outcomes: unknown[]; restart?: string; warnings: string[]; backups: string[] }>('clients.protect', { client: 'cursor', servers: 'all' });
    expect(report).toMatchObject({ outcomes: [{ server: 'notes', result: 'protected', scope: 'global', path: config }], restart: 'Restart Cursor (or reload its MCP servers) to apply.', warnings: [] });
    expect(readFileSync(config, 'utf8')).toContain('"wrap"');
    const listed = (await ui<{ client: string; locations: { servers: { wrappedAs?: string }[] }[] }[]>('clients.list')).find((c) => c.client === 'cursor')!;
    expect(listed.locations[0]!.servers[0]).toMatchObject({ protected: true, wrappedAs: 'notes' });
    expect(broker.events({ limit: 5 }).events[0]).toMatchObject({ type: 'server-protected', server: 'notes', detail: { client: 'cursor', via: 'api', protected: true } });
    expect(await ui('clients.protect', { client: 'cursor', servers: ['notes'] })).toMatchObject({ outcomes: [{ result: 'unchanged' }], warnings: [] });
    expect(await ui('clients.protect', { client: 'cursor', servers: ['notes'] })).not.toHaveProperty('restart');

    const bare = setup({ env }).ui;
    await expect(bare('clients.protect', { client: 'cursor', servers: 'all' })).rejects.toMatchObject({ code: 'bad-state', message: expect.stringMatching(/launcher/) });
    expect(await bare('clients.unprotect', { client: 'cursor', servers: ['notes'] })).toMatchObject({ outcomes: [{ result: 'unprotected' }], restart: expect.any(String) });
    expect(readFileSync(config, 'utf8')).not.toContain('"wrap"');
  });

  test('what cannot be done is a bad-request with the reason', async () => {
    const { env } = cursorHome();
    const { ui } = setup({ env, launcher: TEST_LAUNCHER });
    await expect(ui('clients.protect', { client: 'nope', servers: 'all' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/unknown client/) });
    await expect(ui('clients.protect', { client: 'cursor', servers: ['ghost'] })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/no server "ghost"/) });
    await expect(ui('clients.protect', { client: 'zed', servers: 'all' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/no Zed config/) });
    await expect(ui('clients.protect', { client: 'cursor', servers: [] })).rejects.toMatchObject({ code: 'bad-request' });
    await expect(ui('inspect', { client: 'nope', server: 'x' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/unknown client/) });
    await expect(ui('inspect', { client: 'cursor', server: 'ghost' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/no server "ghost"/) });
    await expect(ui('inspect', { client: 'cursor', server: 'x', timeoutSeconds: 0 })).rejects.toMatchObject({ code: 'bad-request' });
  });
});
