/**
 * Undo on its own, against a fake port (no broker, no channels): a real store and real files in a temp folder,
 * and a port that keeps what undo asked of the broker. The journal writer hands undo the calls it filed into the
 * journal, after the commit and the publish, and only those: a batch that was not taken in leaves its snapshot
 * waiting.
 */
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { JournalWriter } from '../../../../proxy-core/src/broker/journal-writer.js';
import type { Session } from '../../../../proxy-core/src/broker/sessions.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import { FileTools } from '../../../../proxy-core/src/broker/undo/file-tools.js';
import type { UndoPort } from '../../../../proxy-core/src/broker/undo/port.js';
import { Undo } from '../../../../proxy-core/src/broker/undo/undo.js';
import { systemMatchEnv } from '../../../../proxy-core/src/policy/arg-conditions.js';
import type { CallRecord } from '../../../../proxy-core/src/protocol/api.js';
import { ruleFor } from '../../../helpers/policy.js';
import { callRecord } from '../../../helpers/records.js';
import { FakeClock } from '../../../helpers/fake-clock.js';

const FS_COMMAND = ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/files'];

const dirs: string[] = [];
const stores: Store[] = [];
const undos: Undo[] = [];
afterEach(async () => {
  for (const u of undos.splice(0)) await u.idle();
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** What undo asked of the broker, in order: 'journal <id>', 'record <type>', 'publish <ids>', 'committed <ids>'. */
type Log = string[];

function setup(over: Partial<UndoPort> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'al-undo-port-'));
  dirs.push(dir);
  const files = join(dir, 'files');
  mkdirSync(files);
  const store = new Store(join(dir, 'airlock.db'));
  stores.push(store);
  const clock = new FakeClock();
  const fileTools = new FileTools({ db: store.db, now: () => clock.now(), record: () => {} });
  // the filesystem server's write_file is built in for a server started with its command
  fileTools.noteSession('fs', FS_COMMAND);
  const log: Log = [];
  const entries: CallRecord[] = [];
  const events: { type: string; detail: unknown }[] = [];
  const port: UndoPort = {
    dataDir: dir,
    clock,
    matchEnv: systemMatchEnv,
    fileTools,
    store,
    journal: (entry) => {
      log.push(`journal ${entry.id}`);
      entries.push(entry);
      store.writeJournal([entry]);
    },
    record: (type, _server, _tool, detail) => {
      log.push(`record ${type}`);
      events.push({ type, detail });
    },
    sessions: () => [],
    request: () => Promise.reject(new Error('no wrapper is connected')),
    push: () => Promise.resolve(),
    estop: () => false,
    ticketTimeoutSeconds: () => 120,
    rules: () => [],
    ...over,
  };
  const undo = new Undo(port);
  undos.push(undo);
  const session = { info: { id: 's1', client: 'c', server: 'fs', command: FS_COMMAND, pid: 1, startedAt: 1 } } as unknown as Session;
  const writer = (s: Store = store) => {
    const w = new JournalWriter({
      store: s,
      publish: (published) => log.push(`publish ${published.map((e) => (e.detail as { id: string }).id).join(',')}`),
      committed: (calls) => {
        log.push(`committed ${calls.map((c) => c.id).join(',')}`);
        undo.journaled(calls);
      },
      refused: (error) => log.push(`refused ${error}`),
    });
    // as the broker wires it: a reader of the journal (undo among them) sees every batch taken in
    s.fileIntake = () => w.catchUp();
    return w;
  };
  return { dir, files, store, undo, session, log, entries, events, writer };
}

/** As the filesystem server writes a file: a new one renamed over the old (which undo holds by a link meanwhile). */
function replace(file: string, text: string): void {
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
}

const written = (id: string, file: string, over: Partial<CallRecord> = {}) =>
  callRecord({ id, tool: 'write_file', arguments: JSON.stringify({ path: file }), outcome: 'ok', finishedAt: 2, ...over });

describe('undo through its port', () => {
  test('a snapshot is taken before the call, made ready once the journal writer hands over the committed call, and undone', async () => {
    const { files, undo, session, log, entries, events, writer } = setup();
    const file = join(files, 'a.txt');
    writeFileSync(file, 'before');
    expect(await undo.prepare(session, { callId: 'c1', tool: 'write_file', paths: { path: file } })).toEqual({ ok: true, undoable: true });
    replace(file, 'after');

    const w = writer();
    await w.write(session, [written('c1', file)]);
    // taken in: filed into the journal once no batch came for a moment (or for a reader)
    expect(log).toEqual([]);
    w.catchUp();
    // the event is published first, then undo hears of the committed call
    expect(log.slice(0, 2)).toEqual(['publish c1', 'committed c1']);
    await undo.idle();
    expect(events.find((e) => e.type === 'undo-known')?.detail).toMatchObject({ callId: 'c1', undo: { available: true, kind: 'snapshot', paths: [file] } });

    const report = await undo.undo('c1', false);
    expect(report).toMatchObject({ ok: true, kind: 'snapshot', restored: [{ path: file, action: 'restored' }] });
    expect(readFileSync(file, 'utf8')).toBe('before');
    // the undo is journaled through the port as a call of its own, and said in an event
    expect(entries).toEqual([expect.objectContaining({ id: report.undoId, client: 'airlock-undo', server: 'fs', tool: 'write_file', outcome: 'ok' })]);
    expect(log.slice(-2)).toEqual([`journal ${report.undoId}`, 'record undo']);
    expect(await undo.undo('c1', false)).toMatchObject({ ok: false, summary: `already undone (by ${report.undoId})` });
  });

  test('a batch the journal did not commit is not handed to undo: the snapshot waits for the call end it never heard of', async () => {
    const { store, files, undo, session, log, writer } = setup();
    const file = join(files, 'b.txt');
    writeFileSync(file, 'before');
    await undo.prepare(session, { callId: 'c2', tool: 'write_file', paths: { path: file } });
    const failing = Object.assign(Object.create(store) as Store, {
      intake: Object.assign(Object.create(store.intake) as Store['intake'], {
        append: () => {
          throw new Error('database or disk is full');
        },
      }),
    });
    await expect(writer(failing).write(session, [written('c2', file)])).rejects.toMatchObject({ code: 'journal-failed' });
    await undo.idle();
    expect(log.filter((l) => l.startsWith('committed') || l.startsWith('publish'))).toEqual([]);
    expect(await undo.undo('c2', false)).toMatchObject({ ok: false, summary: expect.stringMatching(/Airlock has not recorded what the call left in its files/) });

    // sent again and committed this time: now it is recorded
    await writer().write(session, [written('c2', file)]);
    store.caughtUp();
    await undo.idle();
    expect(undo.annotate({ calls: [store.call('c2')!] }).calls[0]!.undo).toMatchObject({ available: false, state: 'unchanged' });
  });

  test('a pending copy is handed over but records nothing; the final copy, as the journal merged it, does', async () => {
    const { store, files, undo, session, writer } = setup();
    const file = join(files, 'c.txt');
    writeFileSync(file, 'before');
    await undo.prepare(session, { callId: 'c3', tool: 'write_file', paths: { path: file } });
    const w = writer();
    await w.write(session, [written('c3', file, { outcome: 'pending', finishedAt: undefined })]);
    w.catchUp();
    await undo.idle();
    expect(undo.annotate({ calls: [store.call('c3')!] }).calls[0]!.undo).toMatchObject({ available: false, state: 'prepared' });
    replace(file, 'after');
    await w.write(session, [written('c3', file)]);
    w.catchUp();
    await undo.idle();
    expect(undo.annotate({ calls: [store.call('c3')!] }).calls[0]!.undo).toMatchObject({ available: true, state: 'ready' });
  });

  test('the port decides what the broker state allows: a rule on undoability sees a snapshot that cannot be taken', async () => {
    const { files, undo, session } = setup({
      rules: () => [ruleFor('allow', 'write_file', { id: 'r1', server: 'fs', undoable: true })],
    });
    // a folder where a file is expected: not snapshotted, so a rule that allowed the call for being undoable must not let it run
    const folder = join(files, 'dir');
    mkdirSync(folder);
    expect(await undo.prepare(session, { callId: 'c4', tool: 'write_file', paths: { path: folder } })).toMatchObject({ ok: false, undoable: false, reason: expect.stringMatching(/rule r1/) });
  });
});
