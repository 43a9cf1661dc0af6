/**
 * Undo in the broker, on in-memory channels with a real store and real files in a temp folder: what a wrapper's
 * policy and a ticket say, snapshots taken before a call (and what refuses one, or only makes it not undoable),
 * the state a call leaves, undo and its conflicts, declared inverses run through a wrapper, E-Stop, pruning and
 * rollback.
 */
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Broker } from '../../../../proxy-core/src/broker/broker.js';
import { SEAL_KEY_FILE } from '../../../../proxy-core/src/broker/db/seals.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import type { CallRecord, HistoryItem } from '../../../../proxy-core/src/protocol/api.js';
import { callRecord } from '../../../helpers/records.js';
import type { PrepareAnswer } from '../../../../proxy-core/src/protocol/undo-api.js';
import type { PolicySnapshot } from '../../../../proxy-core/src/policy/decide.js';
import { FakeClock } from '../../../helpers/fake-clock.js';
import { RETRY_MS } from '../../../../proxy-core/src/broker/journal-indexer.js';
import { channelPair } from '../../../helpers/memory-channel.js';

const dirs: string[] = [];
const stores: Store[] = [];
const brokers: Broker[] = [];
afterEach(async () => {
  // what undo still writes after a test's last step (a snapshot stored while its call ran) ends first
  for (const b of brokers.splice(0)) await b.undo.idle();
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const FS_COMMAND = ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/files'];
const tick = () => new Promise((r) => setImmediate(r));

function setup(clock?: FakeClock) {
  const dir = mkdtempSync(join(tmpdir(), 'al-undo-'));
  dirs.push(dir);
  const files = join(dir, 'files');
  mkdirSync(files);
  return { dir, files, ...brokerIn(dir, clock) };
}

function brokerIn(dir: string, clock = new FakeClock()) {
  const store = new Store(join(dir, 'airlock.db'));
  stores.push(store);
  const broker = new Broker({ presence: { required: false }, store, dataDir: dir, ticketTimeoutSeconds: 120, ackTimeoutMs: 1500, clock });
  brokers.push(broker);
  return { store, broker };
}

/** The links holding old files that a call replaces, in the data dir's snapshots folder. */
const heldLinks = (dir: string) => readdirSync(join(dir, 'snapshots')).filter((n) => n.startsWith('.held-'));

/**
 * The data dir as a broker SIGKILLed at this moment leaves it, copied (synchronously: nothing of the broker runs
 * meanwhile) into a new folder, with a broker started on it. The database, its write-ahead log and the key its rows
 * are sealed with are copied; the snapshots folder's entries are linked, so a held old file is still the same file
 * (its inode) in the copy.
 */
function killedAndStarted(dir: string, clock?: FakeClock) {
  const copy = mkdtempSync(join(tmpdir(), 'al-undo-killed-'));
  dirs.push(copy);
  for (const name of ['airlock.db', 'airlock.db-wal', SEAL_KEY_FILE]) if (existsSync(join(dir, name))) copyFileSync(join(dir, name), join(copy, name));
  mkdirSync(join(copy, 'snapshots'), { mode: 0o700 });
  for (const name of readdirSync(join(dir, 'snapshots'))) linkSync(join(dir, 'snapshots', name), join(copy, 'snapshots', name));
  return brokerIn(copy, clock);
}

type ToolCallHandler = (params: { tool: string; arguments: Record<string, unknown> }) => unknown;

/** A wrapper on an in-memory channel: it applies pushes, and answers the broker's tool calls with `onToolCall`. */
async function wrapper(broker: Broker, o: { server?: string; command?: string[]; undo?: unknown[]; onToolCall?: ToolCallHandler } = {}) {
  const [end, peer] = channelPair();
  broker.attach(end, 'wrapper');
  const policies: PolicySnapshot[] = [];
  const toolCalls: unknown[] = [];
  peer.setHandlers({
    notify: (method, params) => {
      if (method !== 'policy') return;
      policies.push(params as PolicySnapshot);
      peer.notify('policy.ack', { version: (params as PolicySnapshot).version });
    },
    request: (method, params) => {
      if (method !== 'wrapper.call-tool') throw new Error(`unexpected ${method}`);
      toolCalls.push(params);
      return o.onToolCall ? o.onToolCall(params as Parameters<ToolCallHandler>[0]) : { ok: true, result: { content: [] } };
    },
  });
  const opened = await peer.request<{ sessionId: string; policy: PolicySnapshot }>('session.open', {
    client: 'c',
    server: o.server ?? 'fs',
    command: o.command ?? FS_COMMAND,
    pid: 1,
    trustFlag: false,
    ...(o.undo ? { undo: o.undo } : {}),
  });
  policies.push(opened.policy);
  let n = 0;
  const w = {
    peer,
    sessionId: opened.sessionId,
    policies,
    toolCalls,
    catalog: (names: string[], annotations: Record<string, unknown> = {}) =>
      peer.request('catalog.update', { verdicts: names.map((name) => ({ name, class: 'mutating', reasons: [], declared: annotations[name] })), problems: [] }),
    /** `call.prepare`, naming the snapshotted calls answered since the last one (`finished`), as a wrapper does. */
    prepare: (callId: string, tool: string, paths: Record<string, unknown>, finished?: string[]) =>
      peer.request<PrepareAnswer>('call.prepare', { callId, tool, paths, ...(finished ? { finished } : {}) }),
    journal: async (r: Partial<CallRecord> & Pick<CallRecord, 'id' | 'tool'>) => {
      await peer.request('journal', { entries: [record(r)] });
      // the journal files the batch once no other came for a moment (here at once), and the after-state of a
      // snapshotted call is read once its end is filed: wait for both
      broker.store.caughtUp();
      await broker.undo.idle();
    },
    /** One allowed call: prepared (file tools), `act` run (what the server does), then journaled as finished. */
    call: async (tool: string, args: Record<string, unknown>, act: () => void = () => {}, extra: Partial<CallRecord> = {}) => {
      const id = `call-${++n}-${Math.random().toString(36).slice(2, 6)}`;
      const tools = policies.at(-1)?.fileTools ?? {};
      let prepared: PrepareAnswer | undefined;
      if (Object.hasOwn(tools, tool)) {
        prepared = await w.prepare(id, tool, Object.fromEntries(tools[tool]!.map((a) => [a, args[a] ?? null])));
        if (!prepared.ok) {
          await w.journal({ id, tool, arguments: JSON.stringify(args), decision: 'deny', decidedBy: 'error', outcome: 'not-run' });
          return { id, prepared };
        }
      }
      act();
      await w.journal({ id, tool, arguments: JSON.stringify(args), ...extra });
      return { id, prepared };
    },
  };
  return w;
}

/** What the filesystem server does to write a file: a new file renamed over the old one, its mode kept. */
function replace(path: string, content: string | Buffer): void {
  const mode = existsSync(path) ? statSync(path).mode & 0o777 : undefined;
  const tmp = `${path}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, path);
  if (mode !== undefined) chmodSync(path, mode);
}

/** The wrapper's journal batch sent as it is, several entries at once. */
const peer = (w: { peer: ReturnType<typeof channelPair>[1] }) => ({ journal: (entries: CallRecord[]) => w.peer.request('journal', { entries }) });

function record(r: Partial<CallRecord> & Pick<CallRecord, 'id' | 'tool'>): CallRecord {
  return callRecord({ client: 'c', outcome: 'ok', forwardedAt: 1, finishedAt: 2, ...r });
}

function entry(broker: Broker, id: string): HistoryItem {
  return broker.history({ limit: 1000 }).calls.find((c) => c.id === id)!;
}

describe("a wrapper's policy and a ticket", () => {
  test("the filesystem server's file tools are pushed with their path arguments; a declared file tool joins them", async () => {
    const { broker } = setup();
    const w = await wrapper(broker);
    expect(w.policies[0]!.fileTools).toEqual({ write_file: ['path'], edit_file: ['path'], move_file: ['source', 'destination'], create_directory: ['path'] });
    await broker.setFileTool({ server: 'fs', tool: 'save', kind: 'write', pathArg: 'file', contentArg: 'text' });
    expect(w.policies.at(-1)!.fileTools).toMatchObject({ save: ['file'] });
    const other = await wrapper(broker, { server: 'notes', command: ['notes-server'] });
    expect(other.policies[0]!.fileTools).toEqual({});
  });

  test('a ticket says before approval whether the call will be undoable', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const ask = (tool: string, args: Record<string, unknown>) =>
      void w.peer.request('call.ask', { callId: `a-${Math.random()}`, tool, arguments: args, class: 'mutating', reasons: [] }).catch(() => {});
    ask('write_file', { path: join(files, 'x'), content: 'y' });
    ask('write_file', { path: 'relative/x', content: 'y' });
    ask('read_text_file', { path: join(files, 'x') });
    for (let i = 0; i < 20 && broker.pending().length < 3; i++) await tick();
    expect(broker.pending().map((t) => t.undoable)).toEqual([{ kind: 'snapshot' }, null, null]);
  });

  test('a declared inverse withdraws the read-only claim of its tool, in every wrapper of the server', async () => {
    const { broker } = setup();
    const w = await wrapper(broker, { server: 'mem', command: ['mem'] });
    await w.catalog(['make', 'unmake'], { make: { readOnlyHint: true } });
    await broker.undo.declare({ server: 'mem', tool: 'make', inverse: 'unmake', from: 'args' });
    expect(w.policies.at(-1)!.withdrawn.make).toMatch(/an inverse is declared for it \(make=unmake/);
  });
});

describe('snapshots before a call', () => {
  test('write, undo: the bytes and mode are back; a second undo is refused, not repeated', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const path = join(files, 'a.txt');
    writeFileSync(path, 'before');
    chmodSync(path, 0o600);
    const { id, prepared } = await w.call('write_file', { path, content: 'after' }, () => {
      replace(path, 'after');
      chmodSync(path, 0o644);
    });
    expect(prepared).toEqual({ ok: true, undoable: true });
    expect(entry(broker, id).undo).toMatchObject({ available: true, kind: 'snapshot', state: 'ready', paths: [path] });
    const report = await broker.undo.undo(id, false);
    expect(report).toMatchObject({ ok: true, restored: [{ path, action: 'restored' }] });
    expect(readFileSync(path, 'utf8')).toBe('before');
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: false, summary: `already undone (by ${report.undoId})` });
  });

  test('a call that did not run (denied after its snapshot) leaves no record; one that changed nothing has nothing to undo', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const path = join(files, 'a.txt');
    writeFileSync(path, 'same');
    const { id: notRun } = await w.call('write_file', { path }, () => {}, { decision: 'deny', decidedBy: 'estop', outcome: 'not-run' });
    expect(entry(broker, notRun).undo).toEqual({ available: false, kind: null, reason: 'the call did not run' });
    const { id: same } = await w.call('write_file', { path }, () => replace(path, 'same'));
    expect(entry(broker, same).undo).toMatchObject({ available: false, state: 'unchanged', reason: 'the call left its files as they were' });
    expect(broker.status().snapshots).toMatchObject({ blobs: 0, bytes: 0 });
  });

  test.each([
    ['a path that is not a string', { path: 42 }, /path argument is not a path/],
    ['a relative path', { path: 'notes/a.txt' }, /relative path/],
    ['a NUL in the path', { path: '/tmp/a\u0000b' }, /not a path/],
  ])('%s: the call runs, not undoable', async (_what, paths, reason) => {
    const { broker } = setup();
    const w = await wrapper(broker);
    expect(await w.prepare('p1', 'write_file', paths)).toEqual({ ok: true, undoable: false, reason: expect.stringMatching(reason) });
  });

  test('a symlink loop, a FIFO, a folder and a file over the cap: the call runs, not undoable (and never hangs)', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    symlinkSync(join(files, 'loop2'), join(files, 'loop1'));
    symlinkSync(join(files, 'loop1'), join(files, 'loop2'));
    expect(await w.prepare('p1', 'write_file', { path: join(files, 'loop1') })).toMatchObject({ ok: true, undoable: false, reason: expect.stringMatching(/cannot be resolved \(ELOOP\)/) });
    execFileSync('mkfifo', [join(files, 'fifo')]);
    expect(await w.prepare('p2', 'write_file', { path: join(files, 'fifo') })).toMatchObject({ ok: true, undoable: false, reason: expect.stringMatching(/FIFO/) });
    expect(await w.prepare('p3', 'write_file', { path: files })).toMatchObject({ ok: true, undoable: false, reason: expect.stringMatching(/folder/) });
    await broker.setSetting('snapshot-file-mb', '1');
    writeFileSync(join(files, 'big'), Buffer.alloc(1024 * 1024 + 1));
    expect(await w.prepare('p4', 'write_file', { path: join(files, 'big') })).toMatchObject({ ok: true, undoable: false, reason: expect.stringMatching(/over the snapshot cap of 1\.0 MB/) });
    // the history says why, once the call is journaled
    await w.journal({ id: 'p4', tool: 'write_file' });
    expect(entry(broker, 'p4').undo).toMatchObject({ available: false, state: 'unavailable', reason: expect.stringMatching(/over the snapshot cap/) });
  });

  test('a snapshot that cannot be stored: that call is marked not undoable, and the next one is refused until storing works', async () => {
    const { broker, files, dir } = setup();
    const w = await wrapper(broker);
    // big enough to be written while its call runs (a small copy is written before, and refused when it cannot be)
    writeFileSync(join(files, 'a.txt'), 'b'.repeat(100 * 1024));
    // the folder the broker holds removed, a file where it was
    rmSync(join(dir, 'snapshots'), { recursive: true });
    writeFileSync(join(dir, 'snapshots'), 'not a folder');
    // the prior state was read: the call may run; storing it (while the call runs) fails: a removed folder takes no
    // new file, and the broker lets go of it
    expect(await w.prepare('p1', 'write_file', { path: join(files, 'a.txt') })).toEqual({ ok: true, undoable: true });
    await broker.undo.idle();
    expect(broker.events({ limit: 10 }).events.find((e) => e.type === 'snapshot-failed')?.detail).toMatchObject({ callId: 'p1', error: 'ENOENT' });
    await w.journal({ id: 'p1', tool: 'write_file' });
    expect(entry(broker, 'p1').undo).toMatchObject({ available: false, reason: expect.stringMatching(/could not be stored \(ENOENT\)/) });
    // from now on a snapshot is stored before its call is let through, and one that cannot be refuses the call:
    // the path is checked again, and a file there is no folder to keep snapshots in
    expect(await w.prepare('p2', 'write_file', { path: join(files, 'a.txt') })).toEqual({
      ok: false,
      undoable: false,
      reason: expect.stringMatching(/could not record the snapshot of .*a\.txt \(undo's snapshots folder .*snapshots is not a folder: .*\) before the call, so the call was not run/),
    });
    // the file taken away: the next snapshot makes the folder anew, and its call runs
    rmSync(join(dir, 'snapshots'));
    expect(await w.prepare('p3', 'write_file', { path: join(files, 'a.txt') })).toEqual({ ok: true, undoable: true });
    await broker.undo.idle();
    expect(statSync(join(dir, 'snapshots')).isDirectory()).toBe(true);
    // a small copy that cannot be stored refuses its call at once: nothing ran that could not be undone
    rmSync(join(dir, 'snapshots'), { recursive: true });
    writeFileSync(join(dir, 'snapshots'), 'not a folder');
    writeFileSync(join(files, 'small.txt'), 'small');
    expect(await w.prepare('p4', 'write_file', { path: join(files, 'small.txt') })).toMatchObject({ ok: false, reason: expect.stringMatching(/before the call, so the call was not run/) });
  });

  test('the snapshots folder removed and a symlink put in its place while the broker runs: nothing goes where it leads, and the next call is refused saying why', async () => {
    const { broker, files, dir } = setup();
    const w = await wrapper(broker);
    // big enough to be written while its call runs
    writeFileSync(join(files, 'a.txt'), 'b'.repeat(100 * 1024));
    const elsewhere = mkdtempSync(join(tmpdir(), 'al-elsewhere-'));
    dirs.push(elsewhere);
    rmSync(join(dir, 'snapshots'), { recursive: true });
    symlinkSync(elsewhere, join(dir, 'snapshots'));
    // the folder held is gone: neither the old file's link nor a copy can be kept in it; the call was let through
    expect(await w.prepare('p1', 'write_file', { path: join(files, 'a.txt') })).toEqual({ ok: true, undoable: true });
    await broker.undo.idle();
    expect(broker.events({ limit: 10 }).events.find((e) => e.type === 'snapshot-failed')?.detail).toMatchObject({ callId: 'p1' });
    // the path is checked again, and a link is no folder to keep snapshots in
    expect(await w.prepare('p2', 'write_file', { path: join(files, 'a.txt') })).toEqual({
      ok: false,
      undoable: false,
      reason: expect.stringMatching(/could not record the snapshot of .*a\.txt \(undo's snapshots folder .*snapshots is a symlink: .*\) before the call/),
    });
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  test("the filesystem server's write_file holds the old file by a link until the call is over, then keeps a copy", async () => {
    const { broker, files, dir } = setup();
    const w = await wrapper(broker);
    const path = join(files, 'a.txt');
    writeFileSync(path, 'before');
    const id = 'held-1';
    expect(await w.prepare(id, 'write_file', { path })).toEqual({ ok: true, undoable: true });
    await broker.undo.idle();
    // no copy yet: the old file itself is held
    expect(heldLinks(dir)).toHaveLength(1);
    expect(broker.status().snapshots).toMatchObject({ blobs: 0 });
    replace(path, 'after');
    await w.journal({ id, tool: 'write_file', arguments: JSON.stringify({ path }) });
    expect(heldLinks(dir)).toEqual([]);
    expect(broker.status().snapshots).toMatchObject({ blobs: 1, bytes: 6 });
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: true });
    expect(readFileSync(path, 'utf8')).toBe('before');
  });

  /** write_file of a file holding "before", which the server replaces with "after"; `meanwhile` runs while the call is out. */
  async function replacedWhileHeld(id: string, meanwhile: (path: string) => void = () => {}) {
    const { broker, files, dir } = setup();
    const w = await wrapper(broker);
    const path = join(files, 'a.txt');
    writeFileSync(path, 'before', { mode: 0o644 });
    const old = statSync(path);
    expect(await w.prepare(id, 'write_file', { path })).toEqual({ ok: true, undoable: true });
    meanwhile(path);
    replace(path, 'after');
    await w.journal({ id, tool: 'write_file', arguments: JSON.stringify({ path }) });
    await broker.undo.idle();
    const blobs = readdirSync(join(dir, 'snapshots')).filter((n) => /^[0-9a-f]{64}$/.test(n));
    expect(blobs).toHaveLength(1);
    expect(heldLinks(dir)).toEqual([]);
    return { broker, path, old, blob: statSync(join(dir, 'snapshots', blobs[0]!)) };
  }

  test('the held old file, named by nothing else once the server replaced it, becomes the blob itself (no copy), private', async () => {
    const { broker, path, old, blob } = await replacedWhileHeld('adopted-1');
    // the very inode the file had, now only the blob's, and readable by its owner alone
    expect([blob.ino, blob.dev, blob.nlink]).toEqual([old.ino, old.dev, 1]);
    expect(blob.mode & 0o777).toBe(0o600);
    expect(await broker.undo.undo('adopted-1', false)).toMatchObject({ ok: true });
    expect(readFileSync(path, 'utf8')).toBe('before');
  });

  test('a held old file someone else also links to is copied, so writing through that name cannot change the snapshot', async () => {
    // another name for the old file, made while the call runs (the agent has the same rights as the person)
    let other = '';
    const { broker, path, blob } = await replacedWhileHeld('linked-1', (p) => execFileSync('ln', [p, (other = `${p}.other-name`)]));
    expect(blob.ino).not.toBe(statSync(other).ino);
    // the other name's inode is written in place: the snapshot keeps the bytes it had
    writeFileSync(other, 'changed through another name');
    expect(await broker.undo.undo('linked-1', false)).toMatchObject({ ok: true });
    expect(readFileSync(path, 'utf8')).toBe('before');
  });

  test('a server that writes into the file instead of replacing it: the prior bytes are lost, and the call says so', async () => {
    const { broker, files, dir } = setup();
    const w = await wrapper(broker);
    const path = join(files, 'a.txt');
    writeFileSync(path, 'before');
    const { id } = await w.call('write_file', { path }, () => writeFileSync(path, 'written in place, longer'));
    expect(entry(broker, id).undo).toMatchObject({ available: false, state: 'unavailable', reason: expect.stringMatching(/wrote into the old file instead of replacing it/) });
    expect(readdirSync(join(dir, 'snapshots'))).toEqual([]);
  });

  test('a declared file tool (how it writes is unknown) has its file copied before the call', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker, { server: 'notes', command: ['notes-server'] });
    await broker.setFileTool({ server: 'notes', tool: 'save', kind: 'write', pathArg: 'file', contentArg: 'text' });
    const path = join(files, 'n.md');
    writeFileSync(path, 'before');
    const { id } = await w.call('save', { file: path, text: 'x' }, () => writeFileSync(path, 'written in place'), { server: 'notes' });
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: true });
    expect(readFileSync(path, 'utf8')).toBe('before');
  });

  test('create_directory: the folders it made are removed by its undo, empty ones only', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const deep = join(files, 'x', 'y');
    const { id } = await w.call('create_directory', { path: deep }, () => mkdirSync(deep, { recursive: true }));
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: true, restored: [{ path: deep, action: 'removed' }] });
    expect(existsSync(join(files, 'x'))).toBe(false);
  });

  test('over the total cap, the oldest snapshots go first and their calls say so', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    await broker.setSetting('snapshot-total-mb', '10');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const path = join(files, `f${i}`);
      writeFileSync(path, Buffer.alloc(4 * 1024 * 1024, i));
      ids.push((await w.call('write_file', { path }, () => replace(path, 'new'))).id);
    }
    expect(entry(broker, ids[0]!).undo).toMatchObject({ available: false, state: 'pruned', reason: expect.stringMatching(/under 10 MB/) });
    expect(entry(broker, ids[2]!).undo).toMatchObject({ available: true });
    expect(broker.status().snapshots).toMatchObject({ blobs: 2, bytes: 8 * 1024 * 1024, totalCapBytes: 10 * 1024 * 1024 });
    const pruned = broker.events({ limit: 100 }).events.find((e) => e.type === 'snapshots-pruned');
    expect(pruned?.detail).toMatchObject({ records: 1, callIds: [ids[0]] });
  });

  test('undo works with no wrapper connected: file snapshots need no server', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const path = join(files, 'a.txt');
    const { id } = await w.call('write_file', { path }, () => replace(path, 'created'));
    w.peer.destroy();
    await tick();
    expect(broker.status().sessions).toEqual([]);
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: true, restored: [{ action: 'removed' }] });
    expect(existsSync(path)).toBe(false);
  });
});

describe('declared inverses', () => {
  const created = { content: [], structuredContent: { entities: [{ name: 'A' }, { name: 'B' }] } };

  const declaration = { server: 'mem', tool: 'create', inverse: 'delete', from: 'result', map: { names: 'entities.name' } };

  /** A wrapper of mem that has listed its tools; the person's declaration of create's inverse is stored once. */
  async function memory(broker: Broker, onToolCall?: ToolCallHandler) {
    const w = await wrapper(broker, { server: 'mem', command: ['mem'], onToolCall });
    await w.catalog(['create', 'delete']);
    if (!broker.undo.declarations().some((d) => d.server === 'mem' && d.tool === 'create' && d.source === 'setting')) await broker.callUser('inverses.set', declaration);
    return w;
  }

  test("run through a connected wrapper of the server, with arguments built from the call's result", async () => {
    const { broker } = setup();
    const w = await memory(broker);
    const { id } = await w.call('create', { entities: [] }, () => {}, { server: 'mem', result: JSON.stringify(created) });
    expect(entry(broker, id).undo).toMatchObject({ available: true, kind: 'inverse', inverse: 'delete' });
    const report = await broker.undo.undo(id, false);
    expect(report).toMatchObject({ ok: true, kind: 'inverse' });
    // the wrapper runs it through its pipeline, journaled under the undo's id, saying what it undoes and who asked
    expect(w.toolCalls).toEqual([{ tool: 'delete', arguments: { names: ['A', 'B'] }, undoId: report.undoId, note: `undo of call ${id} (create), asked for by you`, waitMs: 150_000 }]);
    expect(entry(broker, id).undo).toMatchObject({ state: 'undone', undoneBy: report.undoId });
  });

  test("a broker killed right after the journal's commit, before anything that follows it: the call's inverse was recorded in that commit", async () => {
    const { broker, dir } = setup();
    const w = await memory(broker);
    // the data dir copied the moment the commit is done, before the calls are handed to undo
    const journaled = broker.undo.journaled.bind(broker.undo);
    let restarted: Broker | undefined;
    broker.undo.journaled = (calls) => {
      restarted ??= killedAndStarted(dir).broker;
      journaled(calls);
    };
    const { id } = await w.call('create', { entities: [] }, () => {}, { server: 'mem', result: JSON.stringify(created) });
    expect(restarted).toBeDefined();
    expect(entry(restarted!, id).undo).toMatchObject({ available: true, kind: 'inverse', inverse: 'delete' });
    // run by a wrapper of the same server connected to the broker started again
    const again = await memory(restarted!);
    expect(await restarted!.undo.undo(id, false)).toMatchObject({ ok: true, kind: 'inverse' });
    expect(again.toolCalls).toMatchObject([{ tool: 'delete', arguments: { names: ['A', 'B'] } }]);
  });

  test("a disk that refuses the inverse's record as the call is filed: the filing fails whole, and the call is filed with its record once the disk takes it", async () => {
    const clock = new FakeClock();
    const { broker } = setup(clock);
    const w = await memory(broker);
    const records = (broker.undo as unknown as { records: { insert: (...args: unknown[]) => void } }).records;
    const insert = records.insert.bind(records);
    let refuse = true;
    records.insert = (...args) => {
      if (refuse) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      insert(...args);
    };
    const id = 'create-1';
    await peer(w).journal([record({ id, tool: 'create', server: 'mem', result: JSON.stringify(created) })]);
    broker.store.caughtUp();
    // not filed: it waits in the intake, and no journal entry says it ran without its undo
    expect(broker.store.intake.size).toBe(1);
    expect(broker.store.db.prepare('SELECT COUNT(*) FROM journal_calls WHERE id = ?').pluck().get(id)).toBe(0);
    refuse = false;
    clock.advance(RETRY_MS);
    broker.store.caughtUp();
    expect(broker.store.intake.size).toBe(0);
    expect(entry(broker, id).undo).toMatchObject({ available: true, kind: 'inverse', inverse: 'delete' });
  });

  test('never in a wrapper that took the name with another command; in one started with the same command, yes', async () => {
    const { broker } = setup();
    const w = await memory(broker);
    const { id } = await w.call('create', {}, () => {}, { server: 'mem', result: JSON.stringify(created) });
    w.peer.destroy();
    await tick();
    const other = await wrapper(broker, { server: 'mem', command: ['evil-mem'] });
    const refused = await broker.undo.undo(id, false);
    expect(refused).toMatchObject({ ok: false, summary: expect.stringMatching(/no wrapper of mem started with `mem` is connected \(the wrapper connected as mem runs `evil-mem`: another server/) });
    expect(other.toolCalls).toEqual([]);
    const same = await wrapper(broker, { server: 'mem', command: ['mem'] });
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: true });
    expect(same.toolCalls).toHaveLength(1);
    expect(other.toolCalls).toEqual([]);
  });

  test("a ticket the inverse asks for is marked as an undo (only the wrapper it was sent to, for that tool); a denial leaves the undo not done", async () => {
    const { broker } = setup();
    const asks: unknown[] = [];
    let w!: Awaited<ReturnType<typeof memory>>;
    w = await memory(broker, (p) => {
      const undoId = (p as unknown as { undoId: string }).undoId;
      const ask = (callId: string, tool: string) => w.peer.request<{ decision: string; decidedBy: string; reason: string }>('call.ask', { callId, tool, arguments: p.arguments, class: 'destructive', reasons: [] });
      // another call of the session naming the undo's id for another tool is not marked
      void ask(undoId, 'create');
      return ask(undoId, p.tool).then((a) => {
        asks.push(a);
        return { ok: false, notRun: { decidedBy: a.decidedBy, reason: a.reason } };
      });
    });
    const { id } = await w.call('create', {}, () => {}, { server: 'mem', result: JSON.stringify(created) });
    const report = broker.undo.undo(id, false);
    let pending: ReturnType<Broker['pending']> = [];
    while (pending.length < 2) {
      await tick();
      pending = broker.pending();
    }
    const marked = pending.find((t) => t.tool === 'delete')!;
    expect(marked).toMatchObject({ undoOf: id, arguments: { names: ['A', 'B'] } });
    expect(marked.reasons[0]).toMatch(new RegExp(`an undo you asked for: delete undoes call ${id} \\(create\\)`));
    expect(pending.find((t) => t.tool === 'create')!.undoOf).toBeUndefined();
    broker.deny(marked.id);
    expect(await report).toMatchObject({ ok: false, residue: [expect.stringMatching(/was not run \(user: denied from [^)]*\)/)] });
    expect(entry(broker, id).undo).toMatchObject({ available: true, state: 'failed', reason: expect.stringMatching(/denied from /) });
  });

  test('an inverse a rule denies cannot be declared, and a call cannot count on one a rule denies later', async () => {
    const { broker } = setup();
    const w = await wrapper(broker, { server: 'mem', command: ['mem'] });
    await w.catalog(['create', 'delete']);
    const rule = await broker.addRule({ action: 'deny', server: 'mem', tool: 'del*', client: 'someone-else' });
    await expect(Promise.resolve().then(() => broker.callUser('inverses.set', { server: 'mem', tool: 'create', inverse: 'delete' }))).rejects.toThrow(
      new RegExp(`delete cannot be the inverse of create: rule ${rule.id} .*denies it`),
    );
    await broker.removeRule(rule.id);
    await broker.callUser('inverses.set', { server: 'mem', tool: 'create', inverse: 'delete' });
    expect(w.policies.at(-1)!.inverseTools).toEqual(['create']);
    await broker.addRule({ action: 'deny', server: 'mem', tool: 'delete' });
    expect(w.policies.at(-1)!.inverseTools).toEqual([]);
  });

  test('an inverse that fails is residue; one with no wrapper connected, or under E-Stop, says why and can be tried again', async () => {
    const { broker } = setup();
    let fail = true;
    const w = await memory(broker, () => (fail ? { ok: true, result: { isError: true, content: [{ type: 'text', text: 'no such entity' }] } } : { ok: true, result: {} }));
    const { id } = await w.call('create', {}, () => {}, { server: 'mem', result: JSON.stringify(created) });
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: false, residue: [expect.stringContaining('returned an error: no such entity')] });
    expect(entry(broker, id).undo).toMatchObject({ available: true, state: 'failed' });
    await broker.setEstop(true);
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: false, summary: expect.stringMatching(/E-Stop is on/) });
    expect(w.toolCalls).toHaveLength(1);
    await broker.setEstop(false);
    w.peer.destroy();
    await tick();
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: false, summary: expect.stringMatching(/no wrapper of mem started with `mem` is connected/) });
    fail = false;
    const again = await memory(broker, () => ({ ok: true, result: {} }));
    expect(await broker.undo.undo(id, false)).toMatchObject({ ok: true });
    expect(again.toolCalls).toHaveLength(1);
  });

  test("a call whose result lacks what the mapping needs is not undoable, and says why", async () => {
    const { broker } = setup();
    const w = await memory(broker);
    const { id } = await w.call('create', {}, () => {}, { server: 'mem', result: JSON.stringify({ content: [] }) });
    expect(entry(broker, id).undo).toMatchObject({ available: false, kind: 'inverse', reason: "the call's result has no structuredContent to build its inverse from" });
  });

  test('what a rule on undoable counts on: the stored declaration while both tools are listed, never a flag alone', async () => {
    const { broker } = setup();
    const w = await wrapper(broker, { server: 'mem', command: ['mem'], undo: [{ tool: 'create', inverse: 'delete', from: 'args' }] });
    // the flag is what a config entry says, not the person's choice: the session says it is not applied
    const ignored = broker.events({ limit: 50 }).events.filter((e) => e.type === 'wrap-flags-ignored');
    expect(ignored.map((e) => e.detail)).toEqual([expect.objectContaining({ client: 'c', flags: ['--undo create=delete'] })]);
    expect(w.policies.at(-1)!.inverseTools).toEqual([]);
    // checked against the wrapper's listing, the flag alone is still no way back
    await w.catalog(['create', 'delete', 'add', 'remove']);
    await tick();
    expect(w.policies.at(-1)!.inverseTools).toEqual([]);
    const { id: flagged } = await w.call('create', { names: ['A'] }, () => {}, { server: 'mem' });
    expect(entry(broker, flagged).undo).toMatchObject({ available: false, kind: null, reason: 'neither a file snapshot nor a declared inverse covers this tool' });
    expect(await broker.undo.undo(flagged, false)).toMatchObject({ ok: false });
    expect(w.toolCalls).toEqual([]);
    // the same declaration stored by the person counts
    await broker.callUser('inverses.set', { server: 'mem', tool: 'create', inverse: 'delete', from: 'args' });
    expect(w.policies.at(-1)!.inverseTools).toEqual(['create']);
    const { id: declared } = await w.call('create', { names: ['B'] }, () => {}, { server: 'mem' });
    expect(entry(broker, declared).undo).toMatchObject({ available: true, kind: 'inverse', inverse: 'delete' });
    // a wrapper whose flag says what the person declared is not told it was ignored
    await wrapper(broker, { server: 'mem', command: ['mem'], undo: [{ tool: 'create', inverse: 'delete', from: 'args' }] });
    expect(broker.events({ limit: 50 }).events.filter((e) => e.type === 'wrap-flags-ignored')).toHaveLength(1);
    await broker.callUser('inverses.set', { server: 'mem', tool: 'add', inverse: 'remove' });
    expect(w.policies.at(-1)!.inverseTools!.sort()).toEqual(['add', 'create']);
    // the server stops listing the inverse: a call of add can no longer count on it
    await w.catalog(['create', 'delete', 'add']);
    // (the next push, whatever it is for, says so)
    await broker.callUser('trust.set', { server: 'mem', on: false });
    expect(w.policies.at(-1)!.inverseTools).toEqual(['create']);
  });

  test("a wrapper's flags that do not fit its server's tools are refused when it lists them; stored ones when saved", async () => {
    const { broker } = setup();
    const w = await wrapper(broker, {
      server: 'mem',
      command: ['mem'],
      undo: [
        { tool: 'create', inverse: 'delete', from: 'args' },
        { tool: 'create', inverse: 'remove', from: 'args' },
        { tool: 'open', inverse: 'open', from: 'args' },
        { tool: 'add', inverse: 'gone', from: 'args' },
      ],
    });
    await w.catalog(['create', 'delete', 'add', 'open']);
    const refused = broker.events({ limit: 50 }).events.filter((e) => e.type === 'inverse-refused').map((e) => (e.detail as { problems: string[] }).problems[0]);
    expect(refused.sort()).toEqual(['create is declared more than once', 'gone (the inverse of add) is not one of the server\'s tools', 'open names itself as its own inverse']);
    expect(broker.undo.declarations()).toEqual([expect.objectContaining({ server: 'mem', spec: 'create=delete', source: 'wrapper', sessionId: w.sessionId })]);

    const set = (p: Record<string, unknown>) => Promise.resolve().then(() => broker.callUser('inverses.set', p));
    await expect(set({ server: 'mem', tool: 'add', inverse: 'nothing' })).rejects.toThrow(/nothing \(the inverse of add\) is not one of the server's tools/);
    await expect(set({ server: 'unknown', tool: 'a', inverse: 'b' })).rejects.toThrow(/has not seen the tools of unknown/);
    await expect(set({ server: 'mem', tool: 'add', inverse: 'delete' })).resolves.toMatchObject({ spec: 'add=delete', source: 'setting' });
    await expect(set({ server: 'mem', tool: 'add', inverse: 'create' })).rejects.toThrow(/already has a declared inverse/);
  });
});

describe('rollback and undo last', () => {
  test('newest first; a conflict in one does not stop the others; calls nothing covers are listed', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const [a, b, c] = ['a', 'b', 'c'].map((n) => join(files, n)) as [string, string, string];
    for (const p of [a, b, c]) writeFileSync(p, `${p} before`);
    const ids: string[] = [];
    for (const p of [a, b, c]) ids.push((await w.call('write_file', { path: p }, () => replace(p, 'after'))).id);
    const { id: other } = await w.call('send_mail', { to: 'x' }, () => {}, { class: 'destructive' });
    await w.call('read_text_file', { path: a }, () => {}, { class: 'read-only-trusted' });
    writeFileSync(b, 'someone else');

    const report = await broker.undo.rollback(w.sessionId, false);
    expect(report.results.map((r) => [r.callId, r.ok])).toEqual([[ids[2], true], [ids[1], false], [ids[0], true]]);
    expect(report.results[1]!.conflicts).toHaveLength(1);
    expect(report).toMatchObject({ undone: 2, failed: 1, skipped: [{ callId: other, tool: 'send_mail', reason: expect.stringMatching(/neither a file snapshot nor a declared inverse/) }] });
    expect([readFileSync(a, 'utf8'), readFileSync(b, 'utf8'), readFileSync(c, 'utf8')]).toEqual([`${a} before`, 'someone else', `${c} before`]);
    expect(broker.events({ limit: 5 }).events.find((e) => e.type === 'rollback')?.detail).toEqual({ sessionId: w.sessionId, undone: 2, failed: 1, skipped: 1 });
    await expect(broker.undo.rollback('no-such-session', false)).rejects.toMatchObject({ code: 'not-found' });
  });

  test('a write whose end is journaled after the next call moved its file: its state is the one read at the next prepare', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const [a, c] = [join(files, 'a'), join(files, 'c')];
    writeFileSync(a, 'a before');
    expect(await w.prepare('write-a', 'write_file', { path: a })).toEqual({ ok: true, undoable: true });
    replace(a, 'a after');
    // the server answered the write; the wrapper's next call (a move of the same file) names it in its prepare
    expect(await w.prepare('move-a', 'move_file', { source: a, destination: c }, ['write-a', 'not-a-call'])).toEqual({ ok: true, undoable: true });
    renameSync(a, c);
    // the journal's batch with both ends arrives only now, after the move ran
    await peer(w).journal([record({ id: 'write-a', tool: 'write_file', arguments: JSON.stringify({ path: a }) }), record({ id: 'move-a', tool: 'move_file', arguments: JSON.stringify({ source: a, destination: c }) })]);
    await broker.undo.idle();
    expect(entry(broker, 'write-a').undo).toMatchObject({ available: true, state: 'ready' });
    const report = await broker.undo.rollback(w.sessionId, false);
    expect(report.results.map((r) => [r.callId, r.ok])).toEqual([['move-a', true], ['write-a', true]]);
    expect(readFileSync(a, 'utf8')).toBe('a before');
    expect(existsSync(c)).toBe(false);
  });

  test('a prepare naming a call whose end arrived first waits for the read of what that call left', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const [a, c] = [join(files, 'a'), join(files, 'c')];
    // a move keeps a copy of its file (8 MB, written out over several turns of the event loop), and what it left is
    // read once that copy is kept
    writeFileSync(a, '1'.repeat(8 * 1024 * 1024));
    expect(await w.prepare('move-a', 'move_file', { source: a, destination: c })).toEqual({ ok: true, undoable: true });
    renameSync(a, c);
    // the call's end arrives (what it left is read from now on), and at once the next call's prepare names it
    await peer(w).journal([record({ id: 'move-a', tool: 'move_file', arguments: JSON.stringify({ source: a, destination: c }) })]);
    expect(await w.prepare('write-c', 'write_file', { path: c }, ['move-a'])).toEqual({ ok: true, undoable: true });
    // the next call runs as soon as its prepare is answered
    replace(c, '222');
    await peer(w).journal([record({ id: 'write-c', tool: 'write_file', arguments: JSON.stringify({ path: c }) })]);
    broker.store.caughtUp();
    await broker.undo.idle();
    // what the move left is the moved file, not what the write made of it: undoing the move alone finds c changed
    expect(await broker.undo.undo('move-a', false)).toMatchObject({ ok: false, conflicts: [{ path: c }] });
    expect(readFileSync(c, 'utf8')).toBe('222');
    // undone in order, both go back
    expect(await broker.undo.undo('write-c', false)).toMatchObject({ ok: true });
    expect(await broker.undo.undo('move-a', false)).toMatchObject({ ok: true });
    expect(readFileSync(a, 'utf8')).toHaveLength(8 * 1024 * 1024);
    expect(existsSync(c)).toBe(false);
  });

  test('a replaced file keeps its old bytes though the next call, let through before they are read, replaces it again', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const a = join(files, 'a');
    writeFileSync(a, 'a before');
    expect(await w.prepare('write-1', 'write_file', { path: a })).toEqual({ ok: true, undoable: true });
    replace(a, 'a after 1');
    // the call's end arrives, and at once the next call's prepare names it: that call waits for what the write
    // left in the file, not for its old bytes, and replaces the file again as soon as it is answered
    await peer(w).journal([record({ id: 'write-1', tool: 'write_file', arguments: JSON.stringify({ path: a }) })]);
    expect(await w.prepare('write-2', 'write_file', { path: a }, ['write-1'])).toEqual({ ok: true, undoable: true });
    replace(a, 'a after 2');
    await peer(w).journal([record({ id: 'write-2', tool: 'write_file', arguments: JSON.stringify({ path: a }) })]);
    broker.store.caughtUp();
    await broker.undo.idle();
    expect(entry(broker, 'write-1').undo).toMatchObject({ available: true, state: 'ready' });
    // what the first write left is its own bytes: undone alone, it finds the file changed since
    expect(await broker.undo.undo('write-1', false)).toMatchObject({ ok: false, conflicts: [{ path: a }] });
    expect(await broker.undo.undo('write-2', false)).toMatchObject({ ok: true });
    expect(readFileSync(a, 'utf8')).toBe('a after 1');
    expect(await broker.undo.undo('write-1', false)).toMatchObject({ ok: true });
    expect(readFileSync(a, 'utf8')).toBe('a before');
  });

  test("another session naming a call in its prepare does not read that call's files: its own end does", async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const agent = await wrapper(broker);
    const a = join(files, 'a');
    writeFileSync(a, 'a before');
    expect(await w.prepare('write-a', 'write_file', { path: a })).toEqual({ ok: true, undoable: true });
    // still running on its server when another connection says it ended, and asks a prepare of its own
    const other = join(files, 'other');
    expect(await agent.prepare('agent-1', 'write_file', { path: other }, ['write-a'])).toEqual({ ok: true, undoable: true });
    await broker.undo.idle();
    replace(a, 'a after');
    await w.journal({ id: 'write-a', tool: 'write_file', arguments: JSON.stringify({ path: a }) });
    // read at its own end, as it left the file: its undo puts "a before" back
    expect(await broker.undo.undo('write-a', false)).toMatchObject({ ok: true });
    expect(readFileSync(a, 'utf8')).toBe('a before');
  });

  test('a broker killed once a replaced file\'s after-state was read and the next call let through: the next start finishes its record', async () => {
    const { broker, files, dir } = setup();
    const w = await wrapper(broker);
    const a = join(files, 'a');
    writeFileSync(a, 'a before');
    expect(await w.prepare('write-1', 'write_file', { path: a })).toEqual({ ok: true, undoable: true });
    replace(a, 'a after 1');
    // the next call names the first, and is let through as soon as what the first left is read: its old bytes are
    // kept a moment later, and the broker is killed before that
    expect(await w.prepare('write-2', 'write_file', { path: a }, ['write-1'])).toEqual({ ok: true, undoable: true });
    // killed the moment that answer leaves: both old files still held by their links, and the second call's record
    // written before it was let through
    expect(heldLinks(dir)).toHaveLength(2);
    const restarted = killedAndStarted(dir).broker;
    replace(a, 'a after 2');
    await restarted.undo.idle();
    // the wrapper, connected again (a new session), sends the ends the killed broker never filed
    const again = await wrapper(restarted);
    await peer(again).journal([record({ id: 'write-1', tool: 'write_file', arguments: JSON.stringify({ path: a }) })]);
    restarted.store.caughtUp();
    await restarted.undo.idle();
    expect(entry(restarted, 'write-1').undo).toMatchObject({ available: true, state: 'ready' });
    // what the first write left is its own bytes, read before the second ran: undone alone, it finds the file changed
    expect(await restarted.undo.undo('write-1', false)).toMatchObject({ ok: false, conflicts: [{ path: a }] });
    expect(readFileSync(a, 'utf8')).toBe('a after 2');
    // its next call names the second write, whose session is gone: read now, before that call runs
    expect(await again.prepare('write-3', 'write_file', { path: a }, ['write-2'])).toEqual({ ok: true, undoable: true });
    replace(a, 'a after 3');
    await peer(again).journal(['write-2', 'write-3'].map((id) => record({ id, tool: 'write_file', arguments: JSON.stringify({ path: a }) })));
    restarted.store.caughtUp();
    await restarted.undo.idle();
    expect(await restarted.undo.undo('write-2', false)).toMatchObject({ ok: false, conflicts: [{ path: a }] });
    for (const [id, left] of [['write-3', 'a after 2'], ['write-2', 'a after 1'], ['write-1', 'a before']]) {
      expect(await restarted.undo.undo(id!, false)).toMatchObject({ ok: true });
      expect(readFileSync(a, 'utf8')).toBe(left);
    }
  });

  test('a broker killed as a replaced file becomes its snapshot, before the record says so: the next start keeps it all the same, days later too', async () => {
    const { broker, files, dir } = setup();
    const w = await wrapper(broker);
    const a = join(files, 'a');
    writeFileSync(a, 'a before');
    expect(await w.prepare('write-1', 'write_file', { path: a })).toEqual({ ok: true, undoable: true });
    replace(a, 'a after');
    // the data dir copied the moment the held file has its snapshot's name, before the record naming it commits
    const blobs = broker.undo as unknown as { blobs: { adopt: (...args: unknown[]) => boolean } };
    const adopt = blobs.blobs.adopt.bind(blobs.blobs);
    let restarted: Broker | undefined;
    // started again two days later: older than the day after which a call's end is taken as lost, but finished
    const later = new FakeClock();
    later.advance(2 * 24 * 60 * 60 * 1000);
    blobs.blobs.adopt = (...args) => {
      const kept = adopt(...args);
      restarted ??= killedAndStarted(dir, later).broker;
      return kept;
    };
    await w.journal({ id: 'write-1', tool: 'write_file', arguments: JSON.stringify({ path: a }) });
    expect(restarted).toBeDefined();
    await restarted!.undo.idle();
    expect(entry(restarted!, 'write-1').undo).toMatchObject({ available: true, state: 'ready' });
    expect(await restarted!.undo.undo('write-1', false)).toMatchObject({ ok: true });
    expect(readFileSync(a, 'utf8')).toBe('a before');
  });

  test("a broker killed while a copied file's bytes are written: a small copy was written before its call ran; of a big one the next start says it was never stored", async () => {
    const { broker, files, dir } = setup();
    const w = await wrapper(broker);
    const [a, c] = [join(files, 'a'), join(files, 'c')];
    const [small, moved] = [join(files, 'small'), join(files, 'moved')];
    const big = 'a'.repeat(100 * 1024);
    writeFileSync(a, big);
    writeFileSync(small, 'small before');
    // a move keeps a copy of the file it moves; a small one is written before the call is let through, a big one
    // once it is: killed before that
    expect(await w.prepare('move-small', 'move_file', { source: small, destination: moved })).toEqual({ ok: true, undoable: true });
    expect(await w.prepare('move-a', 'move_file', { source: a, destination: c })).toEqual({ ok: true, undoable: true });
    const restarted = killedAndStarted(dir).broker;
    renameSync(small, moved);
    renameSync(a, c);
    const again = await wrapper(restarted);
    await peer(again).journal([
      record({ id: 'move-small', tool: 'move_file', arguments: JSON.stringify({ source: small, destination: moved }) }),
      record({ id: 'move-a', tool: 'move_file', arguments: JSON.stringify({ source: a, destination: c }) }),
    ]);
    restarted.store.caughtUp();
    await restarted.undo.idle();
    expect(await restarted.undo.undo('move-small', false)).toMatchObject({ ok: true });
    expect(readFileSync(small, 'utf8')).toBe('small before');
    const never = /Airlock stopped before it stored the snapshot taken before this call/;
    expect(entry(restarted, 'move-a').undo).toMatchObject({ available: false, state: 'unavailable', reason: expect.stringMatching(never) });
    expect(await restarted.undo.undo('move-a', false)).toMatchObject({ ok: false, summary: expect.stringMatching(never) });
    expect(readFileSync(c, 'utf8')).toBe(big);
    // the broker that was not killed stored it: its undo moves the file back
    await broker.undo.idle();
    await w.journal({ id: 'move-a', tool: 'move_file', arguments: JSON.stringify({ source: a, destination: c }) });
    expect(await broker.undo.undo('move-a', false)).toMatchObject({ ok: true });
    expect(readFileSync(a, 'utf8')).toBe(big);
  });

  test('undo records edited by hand into shapes undo cannot use: the broker still starts, and those calls cannot be undone, saying why', async () => {
    const { dir, store } = setup();
    const plans = [
      '{"kind":"snapshot","paths":5}',
      '{"kind":"snapshot","paths":[null]}',
      '{"kind":"snapshot"}',
      '{"kind":"snapshot","paths":[{"arg":"path","path":"/x","before":{"type":"file"},"after":{"type":"absent"}}]}',
      '{"kind":"snapshot","paths":[{"arg":"path","path":"/x","before":{"type":"absent"},"after":{"type":"absent"},"held":5}]}',
      '{"kind":"inverse","inverse":"x"}',
      'null',
      '[1',
    ];
    // and one of the right shape whose held file is not there: prepared, what the call left recorded
    const held = { name: '.held-00000000000000ff', dev: 1, ino: 2, size: 3, mtimeMs: 4 };
    plans.push(JSON.stringify({ kind: 'snapshot', paths: [{ arg: 'path', path: '/x', before: { type: 'file', sha256: '', size: 3, mode: 0o100644, mtimeMs: 4 }, after: { type: 'absent' }, held }] }));
    const insert = store.db.prepare(`INSERT INTO undo_records (call_id, server, tool, session_id, kind, state, reason, plan, created_at, updated_at, undone_by, undo_of, holds)
      VALUES (?, 'fs', 'write_file', 's1', 'snapshot', ?, NULL, ?, 1700000000000, 1700000000000, NULL, NULL, 0)`);
    plans.forEach((plan, i) => {
      insert.run(`prepared-${i}`, 'prepared', plan);
      insert.run(`ready-${i}`, 'ready', plan);
      store.writeJournal(['prepared', 'ready'].map((state) => record({ id: `${state}-${i}`, tool: 'write_file', server: 'fs' })));
    });
    const { broker } = brokerIn(dir);
    await broker.undo.idle();
    for (let i = 0; i < plans.length; i++) {
      for (const state of ['prepared', 'ready']) {
        const report = await broker.undo.undo(`${state}-${i}`, false);
        expect(report.ok, `${state} ${plans[i]}`).toBe(false);
        expect(report.summary).not.toBe('');
      }
    }
    expect(await broker.undo.undo(`prepared-${plans.length - 1}`, false)).toMatchObject({ ok: false, summary: expect.stringMatching(/the old file Airlock held is gone/) });
  });

  test("a call left prepared by a gone session is read at a prepare of its server's wrapper only: not another server's, not while its own session is connected", async () => {
    const { broker, files, dir } = setup();
    const w = await wrapper(broker);
    const notes = await wrapper(broker, { server: 'notes', command: ['notes-server'] });
    const a = join(files, 'a');
    writeFileSync(a, 'a before');
    expect(await w.prepare('write-a', 'write_file', { path: a })).toEqual({ ok: true, undoable: true });
    replace(a, 'a after');
    const name = (on: typeof w, callId: string) => on.prepare(callId, 'write_file', { path: join(files, callId) }, ['write-a']);
    // its session still connected: another wrapper of the same server naming it reads nothing
    const twin = await wrapper(broker);
    expect(await name(twin, 'twin-1')).toEqual({ ok: true, undoable: true });
    await broker.undo.idle();
    // not read: the old file is still held by its link, not kept as a snapshot
    expect(heldLinks(dir)).toHaveLength(1);
    // its session gone: a wrapper of another server naming it reads nothing either
    w.peer.destroy();
    for (let i = 0; i < 20 && broker.status().sessions.length > 2; i++) await tick();
    expect(broker.status().sessions).toHaveLength(2);
    await notes.prepare('notes-1', 'save', {}, ['write-a']);
    await broker.undo.idle();
    expect(heldLinks(dir)).toHaveLength(1);
    // a wrapper of its server (its own, connected again) names it: read now, as the file is
    replace(a, 'a after, then more');
    const again = await wrapper(broker);
    expect(await name(again, 'again-1')).toEqual({ ok: true, undoable: true });
    await broker.undo.idle();
    expect(heldLinks(dir)).toHaveLength(0);
    replace(a, 'a changed by the next call');
    await again.journal({ id: 'write-a', tool: 'write_file', arguments: JSON.stringify({ path: a }) });
    expect(await broker.undo.undo('write-a', false)).toMatchObject({ ok: false, conflicts: [{ path: a, found: expect.stringMatching(/26 bytes/) }] });
    expect(readFileSync(a, 'utf8')).toBe('a changed by the next call');
    replace(a, 'a after, then more');
    expect(await broker.undo.undo('write-a', false)).toMatchObject({ ok: true });
    expect(readFileSync(a, 'utf8')).toBe('a before');
  });

  test('undo last takes the newest call not undone yet, never an undo itself', async () => {
    const { broker, files } = setup();
    const w = await wrapper(broker);
    const p = join(files, 'f');
    const first = await w.call('write_file', { path: p }, () => replace(p, 'one'));
    const second = await w.call('write_file', { path: p }, () => replace(p, 'two'));
    expect(await broker.undo.undoLast(undefined, false)).toMatchObject({ ok: true, callId: second.id });
    expect(readFileSync(p, 'utf8')).toBe('one');
    expect(await broker.undo.undoLast('fs', false)).toMatchObject({ ok: true, callId: first.id });
    expect(existsSync(p)).toBe(false);
    expect(await broker.undo.undoLast(undefined, false)).toMatchObject({ ok: false, summary: 'no call can be undone' });
  });
});
