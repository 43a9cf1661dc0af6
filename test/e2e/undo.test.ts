/**
 * Undo against real servers: the filesystem server's writes put back from their snapshots (bytes and mode), a
 * created file removed, a later edit by someone else refused as a conflict, the memory server's
 * create_entities undone by the inverse the person declared (a wrapper's --undo flag alone declares nothing),
 * and a session rolled back with one undo failing; the replaced file kept as the snapshot itself, and that snapshot
 * written into by the agent refused; both kinds of undo kept through a broker SIGKILLed again and again under load.
 * Ground truth is the disk and the server's own state.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, test } from 'vitest';
import type { HistoryItem } from '../../proxy-core/src/protocol/api.js';
import type { RollbackReport } from '../../proxy-core/src/protocol/undo-api.js';
import Database from 'better-sqlite3';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, CLI, cli, cliJson, cliUndo, connectWrapped, MEMORY, onCleanup, finishedCalls, startDaemon, tempDir, untilBroker, waitForTicket } from '../helpers/airlock.js';
import { airlockWithFilesystem, killedUnderCalls } from '../helpers/e2e.js';

afterEach(cleanup);

/** Wait until `count` calls of `tool` (not undos) have their end journaled and what undo can do is known; newest first. */
const finished = (home: string, tool: string, count = 1): Promise<HistoryItem[]> =>
  finishedCalls(home, tool, { count, keep: (x) => !x.id.startsWith('undo-') });

describe('file snapshots (@modelcontextprotocol/server-filesystem)', () => {
  test('an approved write_file, undone: the bytes and the mode are back; undoing the undo redoes it', async () => {
    const home = tempDir();
    const { root, w } = await airlockWithFilesystem(home);
    const target = join(root, 'notes.txt');
    writeFileSync(target, 'the original\nsecond line\n');
    chmodSync(target, 0o640);

    const call = w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'overwritten by the model' } });
    const ticket = await waitForTicket(home, 'write_file');
    // before approval, the card can say the call will be undoable
    expect((ticket as unknown as { undoable: unknown }).undoable).toEqual({ kind: 'snapshot' });
    await cli(home, ['approve', ticket.id]);
    expect((await call).isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('overwritten by the model');

    const [entry] = await finished(home, 'write_file');
    const { code, report } = await cliUndo(home, [entry!.id]);
    expect(code).toBe(0);
    expect(report).toMatchObject({ ok: true, kind: 'snapshot', restored: [{ path: target, action: 'restored' }], conflicts: [], residue: [] });
    expect(readFileSync(target, 'utf8')).toBe('the original\nsecond line\n');
    expect(statSync(target).mode & 0o777).toBe(0o640);

    // the journal says so: the call is undone, the undo is an entry of its own that can be undone (a redo)
    const history = await cliJson<HistoryItem[]>(home, ['history']);
    const original = history.find((h) => h.id === entry!.id)!;
    expect(original.undo).toMatchObject({ available: false, kind: 'snapshot', state: 'undone', undoneBy: report.undoId });
    const undoEntry = history.find((h) => h.id === report.undoId)!;
    expect(undoEntry).toMatchObject({ client: 'airlock-undo', outcome: 'ok', undo: { available: true, kind: 'snapshot', undoOf: entry!.id } });

    const redo = await cliUndo(home, [report.undoId!]);
    expect(redo.report.ok).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('overwritten by the model');
    // and the call can be undone again
    expect((await cliUndo(home, [entry!.id])).report.ok).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('the original\nsecond line\n');

    const status = await cliJson<{ snapshots: { blobs: number; bytes: number; totalCapBytes: number } }>(home, ['status']);
    expect(status.snapshots.blobs).toBeGreaterThan(0);
    expect(status.snapshots.totalCapBytes).toBe(500 * 1024 * 1024);
  });

  test('writes answered right before the broker is stopped can each be undone after its next start', async () => {
    const home = tempDir();
    const { root, daemon, w } = await airlockWithFilesystem(home, 'write_file');
    const target = join(root, 'last.txt');
    writeFileSync(target, 'before the stop');
    for (let i = 1; i <= 3; i++) expect((await w.client.callTool({ name: 'write_file', arguments: { path: target, content: `write ${i}` } })).isError).toBeFalsy();
    // stopped the moment the last write is answered: what the writes left, and the old bytes, are recorded first
    const exited = new Promise((r) => daemon.proc.once('close', r));
    daemon.proc.kill('SIGTERM');
    await exited;
    await startDaemon(home);
    const calls = await finished(home, 'write_file', 3);
    for (const [k, expected] of ['write 2', 'write 1', 'before the stop'].entries()) {
      const { code, report } = await cliUndo(home, [calls[k]!.id]);
      expect([code, report.ok]).toEqual([0, true]);
      expect(readFileSync(target, 'utf8')).toBe(expected);
    }
  });

  test('the broker SIGKILLed again and again while a client writes, edits and moves files and makes folders: every call the server ran is undone, newest first, to exactly what was there before it', async () => {
    const home = tempDir();
    const { root, w, daemon } = await airlockWithFilesystem(home, '*');
    // a loop of changes at machine speed is what the tripwire stops: these are to reach the server
    await cli(home, ['settings', 'tripwire', 'off']);
    const [a, b, folders] = [join(root, 'a.txt'), join(root, 'b.txt'), join(root, 'made')];
    writeFileSync(a, 'v0');
    // ground truth, from the disk: the two files' contents and the folders made, before and after each call
    const onDisk = () => ({
      files: JSON.stringify([a, b].map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : null))),
      folders: existsSync(folders) ? readdirSync(folders) : [],
    });
    const calls: { tool: string; before: ReturnType<typeof onDisk>; after: ReturnType<typeof onDisk> }[] = [];
    const next = async () => {
      const n = calls.length + 1;
      const [from, to] = existsSync(a) ? [a, b] : [b, a];
      const call = [
        { name: 'write_file', arguments: { path: from, content: `v${n}` } },
        { name: 'edit_file', arguments: { path: from, edits: [{ oldText: readFileSync(from, 'utf8'), newText: `e${n}` }] } },
        { name: 'move_file', arguments: { source: from, destination: to } },
        { name: 'create_directory', arguments: { path: join(folders, `f${n}`) } },
      ][n % 4]!;
      const before = onDisk();
      // refused while the broker is down (no snapshot can be taken): the files stay as they were
      await w.client.callTool(call).catch(() => undefined);
      calls.push({ tool: call.name, before, after: onDisk() });
    };
    await killedUnderCalls(home, daemon, () => calls.length, next);
    // a last call after the restart names what came before it, as a client's next call would
    await next();
    const broker = await BrokerClient.connect({ dir: home, role: 'cli' });
    onCleanup(() => broker.close());
    // the journal holds every call, each once: in the wrapper's order (its call ids count up)
    const order = (id: string) => Number(id.slice(id.lastIndexOf('-') + 1));
    const journal = await untilBroker(
      home,
      (e) => e.type === 'call' || e.type === 'undo-known',
      async (c) => {
        const got = (await c.call('history', { limit: 1000 })).calls.filter((x) => x.outcome !== 'pending' && x.undo?.state !== 'prepared');
        return got.length === calls.length ? got.sort((x, y) => order(x.id) - order(y.id)) : undefined;
      },
      8000,
      `${calls.length} calls journaled`,
    );
    expect(journal.map((c) => c.tool)).toEqual(calls.map((c) => c.tool));
    const refused: string[] = [];
    let undone = 0;
    for (let i = calls.length - 1; i >= 0; i--) {
      const [entry, call] = [journal[i]!, calls[i]!];
      const ran = JSON.stringify(call.before) !== JSON.stringify(call.after);
      // what the server ran is journaled as run, and what it did not as not run
      expect(entry.decision === 'allow' && entry.outcome === 'ok', `${entry.id} ${entry.tool}: ${entry.decision}/${entry.outcome}`).toBe(ran);
      if (!ran) continue;
      const before = onDisk();
      const report = await broker.call('undo', { id: entry.id, force: false });
      const after = onDisk();
      if (!report.ok) {
        refused.push(`${entry.tool} ${entry.id}: ${report.summary}`);
        expect(after).toEqual(before);
      } else if (call.tool === 'create_directory') {
        undone++;
        expect(after.folders.sort()).toEqual(call.before.folders.sort());
      } else {
        undone++;
        // never over a later change: the files were as this call left them, and are as they were before it
        expect(before.files, `${entry.id} undone`).toBe(call.after.files);
        expect(after.files).toBe(call.before.files);
      }
    }
    // and a kill, wherever it fell, lost no call's snapshot nor the state it left
    expect(refused).toEqual([]);
    expect(onDisk()).toEqual({ files: JSON.stringify(['v0', null]), folders: [] });
    expect(undone).toBeGreaterThan(5);
  });

  test("undo records the agent edits in the data dir's database into shapes undo cannot use: the daemon starts again, and undo refuses them and writes nothing", async () => {
    const home = tempDir();
    const { root, w, daemon } = await airlockWithFilesystem(home, 'write_file');
    const [x, y] = [join(root, 'x.txt'), join(root, 'y.txt')];
    for (const f of [x, y]) {
      writeFileSync(f, 'before');
      expect((await w.client.callTool({ name: 'write_file', arguments: { path: f, content: 'after' } })).isError).toBeFalsy();
    }
    const calls = await finished(home, 'write_file', 2);
    const stopped = new Promise((r) => daemon.proc.once('close', r));
    daemon.proc.kill('SIGKILL');
    await stopped;
    // one record left as a killed broker leaves it (prepared), one as a finished one (ready), both plans broken
    const db = new Database(join(home, 'airlock.db'));
    const edit = db.prepare('UPDATE undo_records SET state = ?, plan = ? WHERE call_id = ?');
    edit.run('prepared', '{"kind":"snapshot","paths":5}', calls[0]!.id);
    edit.run('ready', '{"kind":"snapshot","paths":[{"arg":"path","path":"/etc/passwd","before":null}]}', calls[1]!.id);
    db.close();
    await startDaemon(home);
    for (const call of calls) {
      const { code, report } = await cliUndo(home, [call.id]);
      expect([code === 0, report.ok]).toEqual([false, false]);
      expect(report.summary).not.toBe('');
    }
    expect([readFileSync(x, 'utf8'), readFileSync(y, 'utf8')]).toEqual(['after', 'after']);
  });

  test('a file the call created is removed by its undo', async () => {
    const home = tempDir();
    const { root, w } = await airlockWithFilesystem(home, 'write_file');
    const target = join(root, 'new.txt');
    expect((await w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'fresh' } })).isError).toBeFalsy();
    expect(existsSync(target)).toBe(true);
    const [entry] = await finished(home, 'write_file');
    expect((await cliUndo(home, [entry!.id])).report).toMatchObject({ ok: true, restored: [{ path: target, action: 'removed' }] });
    expect(existsSync(target)).toBe(false);
  });

  test('a file someone else changed after the call: a conflict, and nothing is overwritten unless forced', async () => {
    const home = tempDir();
    const { root, w } = await airlockWithFilesystem(home, 'write_file');
    const target = join(root, 'shared.txt');
    writeFileSync(target, 'before');
    await w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'by the model' } });
    const [entry] = await finished(home, 'write_file');
    writeFileSync(target, 'edited by a person afterwards');

    const { code, report } = await cliUndo(home, [entry!.id]);
    expect(code).not.toBe(0);
    expect(report).toMatchObject({ ok: false, restored: [], residue: [] });
    expect(report.conflicts).toEqual([{ path: target, expected: expect.stringContaining('a file of 12 bytes'), found: expect.stringContaining('a file of 29 bytes') }]);
    expect(readFileSync(target, 'utf8')).toBe('edited by a person afterwards');

    const forced = await cliUndo(home, [entry!.id, '--force']);
    expect(forced.report.ok).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('before');
    // what was overwritten was snapshotted: undoing the forced undo brings the person's edit back
    expect((await cliUndo(home, [forced.report.undoId!])).report.ok).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('edited by a person afterwards');
  });

  test('the file the server replaced becomes the snapshot itself; written into by the agent, it is refused, never restored', async () => {
    const home = tempDir();
    const { root, w } = await airlockWithFilesystem(home, 'write_file');
    const target = join(root, 'kept.txt');
    writeFileSync(target, 'the original bytes\n');
    chmodSync(target, 0o640);
    const before = statSync(target);
    expect((await w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'overwritten by the model' } })).isError).toBeFalsy();
    const [entry] = await finished(home, 'write_file');
    expect(entry!.undo).toMatchObject({ available: true, kind: 'snapshot' });
    // the server renamed a new file over the old one: the old inode, named only by Airlock now, is the snapshot
    const snapshots = join(home, 'snapshots');
    const blobs = readdirSync(snapshots).filter((n) => /^[0-9a-f]{64}$/.test(n));
    expect(blobs).toHaveLength(1);
    const blob = statSync(join(snapshots, blobs[0]!));
    expect([blob.ino, blob.nlink, blob.mode & 0o777]).toEqual([before.ino, 1, 0o600]);
    expect(readFileSync(join(snapshots, blobs[0]!), 'utf8')).toBe('the original bytes\n');
    expect(readdirSync(snapshots).filter((n) => n.startsWith('.held-'))).toEqual([]);

    // the agent, the same user, writes into the snapshot in the data dir: the undo refuses and writes nothing
    writeFileSync(join(snapshots, blobs[0]!), 'the agent chose these bytes\n');
    const { report } = await cliUndo(home, [entry!.id]);
    expect(report.ok).toBe(false);
    expect(JSON.stringify(report)).toMatch(/damaged/);
    expect(readFileSync(target, 'utf8')).toBe('overwritten by the model');
  });

  test('a rollback of three calls with one failing: its residue is reported, the other two are undone', async () => {
    const home = tempDir();
    const { root, w } = await airlockWithFilesystem(home, '*');
    const [a, b, c] = ['a.txt', 'b.txt', 'c.txt'].map((n) => join(root, n)) as [string, string, string];
    writeFileSync(a, 'a before');
    writeFileSync(b, 'b before');
    for (const [path, content] of [[a, 'a after'], [b, 'b after']]) {
      expect((await w.client.callTool({ name: 'write_file', arguments: { path, content } })).isError).toBeFalsy();
    }
    // the third: a move (both paths snapshotted)
    expect((await w.client.callTool({ name: 'move_file', arguments: { source: a, destination: c } })).isError).toBeFalsy();
    await finished(home, 'write_file', 2);
    await finished(home, 'move_file');
    expect(existsSync(a)).toBe(false);

    // b's snapshot is lost (the data folder damaged): its undo cannot put b back
    const bBefore = (await import('node:crypto')).createHash('sha256').update('b before').digest('hex');
    rmSync(join(home, 'snapshots', bBefore));

    const status = await cliJson<{ sessions: { id: string; server: string }[] }>(home, ['status']);
    const sessionId = status.sessions.find((s) => s.server === 'filesystem')!.id;
    const r = await cli(home, ['rollback', '--session', sessionId, '--json']);
    expect(r.code).not.toBe(0);
    const report = JSON.parse(r.stdout) as RollbackReport;
    expect(report).toMatchObject({ sessionId, undone: 2, failed: 1, skipped: [] });
    // newest first: the move, then b, then a
    expect(report.results.map((x) => x.ok)).toEqual([true, false, true]);
    expect(report.results[1]!.residue.join(' ')).toMatch(/snapshot .* is missing/);
    expect(readFileSync(a, 'utf8')).toBe('a before');
    expect(existsSync(c)).toBe(false);
    expect(readFileSync(b, 'utf8')).toBe('b after');
    const history = await cliJson<HistoryItem[]>(home, ['history', '--tool', 'write_file']);
    expect(history.find((h) => h.arguments.includes('b after'))!.undo).toMatchObject({ available: true, state: 'failed', reason: expect.stringContaining('residue') });
  });
});

describe('declared inverses (@modelcontextprotocol/server-memory)', () => {
  test('the broker SIGKILLed again and again while a client creates entities: every create_entities the server ran is undone by its declared inverse, and the graph is as it began', async () => {
    const home = tempDir();
    const memoryFile = join(home, 'memory.jsonl');
    const daemon = await startDaemon(home);
    // calls at machine speed: the tripwire would stop them; rules let both tools run without a person
    await cli(home, ['settings', 'tripwire', 'off']);
    for (const tool of ['create_entities', 'delete_entities']) expect((await cli(home, ['rules', 'add', 'allow', '--server', 'memory', '--tool', tool])).code).toBe(0);
    const { client } = await connectWrapped({ home, server: 'memory', command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } });
    await client.listTools();
    await untilBroker(home, () => true, async (c) => ((await c.call('catalog', { server: 'memory' })).length > 0 ? true : undefined), 8000, 'the tools of memory');
    expect((await cli(home, ['inverses', 'set', 'memory', 'create_entities=delete_entities:result:entityNames=entities.name'])).code).toBe(0);
    writeFileSync(memoryFile, JSON.stringify({ type: 'entity', name: 'Kept', entityType: 'thing', observations: ['was there before'] }) + '\n');
    // ground truth: the entities in the server's own file
    const graph = () =>
      existsSync(memoryFile)
        ? readFileSync(memoryFile, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { name: string }).name).sort()
        : [];
    const made: { name: string; ran: boolean }[] = [];
    const next = async () => {
      const name = `E${made.length + 1}`;
      // refused while the broker is down: nothing is created
      await client.callTool({ name: 'create_entities', arguments: { entities: [{ name, entityType: 'thing', observations: [] }] } }).catch(() => undefined);
      made.push({ name, ran: graph().includes(name) });
    };
    await killedUnderCalls(home, daemon, () => made.length, next);
    const ran = made.filter((m) => m.ran).map((m) => m.name);
    expect(graph()).toEqual(['Kept', ...ran].sort());
    const broker = await BrokerClient.connect({ dir: home, role: 'cli' });
    onCleanup(() => broker.close());
    // every call journaled with its end; those the server ran, as run, each with its inverse's record
    const nameOf = (h: HistoryItem) => (JSON.parse(h.arguments) as { entities: { name: string }[] }).entities[0]!.name;
    const journal = await untilBroker(
      home,
      (e) => e.type === 'call' || e.type === 'undo-known',
      async (c) => {
        const got = (await c.call('history', { tool: 'create_entities', limit: 1000 })).calls.filter((x) => x.outcome !== 'pending');
        return got.length === made.length ? got : undefined;
      },
      8000,
      `${made.length} calls journaled`,
    );
    const runInJournal = journal.filter((h) => h.decision === 'allow' && h.outcome === 'ok');
    expect(runInJournal.map(nameOf).sort()).toEqual([...ran].sort());
    const refused: string[] = [];
    for (const entry of runInJournal) {
      expect(entry.undo, `${nameOf(entry)}: ${JSON.stringify(entry.undo)}`).toMatchObject({ available: true, kind: 'inverse', inverse: 'delete_entities' });
      const report = await broker.call('undo', { id: entry.id, force: false });
      if (!report.ok) refused.push(`${nameOf(entry)} ${entry.id}: ${report.summary}`);
      expect(graph()).not.toContain(nameOf(entry));
    }
    expect(refused).toEqual([]);
    expect(graph()).toEqual(['Kept']);
    expect(ran.length).toBeGreaterThan(5);
  });

  test("the agent adds a trigger to the live database that rolls back every undo record's insert: the calls that ran wait in the intake, none is lost, and once it is gone each is filed with its inverse and undone", async () => {
    const home = tempDir();
    const memoryFile = join(home, 'memory.jsonl');
    await startDaemon(home);
    for (const tool of ['create_entities', 'delete_entities']) expect((await cli(home, ['rules', 'add', 'allow', '--server', 'memory', '--tool', tool])).code).toBe(0);
    const { client } = await connectWrapped({ home, server: 'memory', command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } });
    await client.listTools();
    await untilBroker(home, () => true, async (c) => ((await c.call('catalog', { server: 'memory' })).length > 0 ? true : undefined), 8000, 'the tools of memory');
    expect((await cli(home, ['inverses', 'set', 'memory', 'create_entities=delete_entities:result:entityNames=entities.name'])).code).toBe(0);
    // the agent, a process of the same user, writes into the broker's database while it runs
    const db = new Database(join(home, 'airlock.db'));
    db.pragma('busy_timeout = 5000');
    db.exec("CREATE TRIGGER agent_jam BEFORE INSERT ON undo_records BEGIN SELECT RAISE(ROLLBACK, 'jammed by the agent'); END");
    const names = ['J1', 'J2', 'J3'];
    for (const name of names) {
      const r = await client.callTool({ name: 'create_entities', arguments: { entities: [{ name, entityType: 'thing', observations: [] }] } });
      expect(r.isError).toBeFalsy();
    }
    // ground truth: the server ran all three
    const graph = () => readFileSync(memoryFile, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { name: string }).name).sort();
    expect(graph()).toEqual(names);
    // the broker tries to file them and says it cannot; none is filed without its record, none is dropped
    const refusal = await untilBroker(
      home,
      (e) => e.type === 'journal-entry-refused',
      async (c) => (await c.call('events', { limit: 100 })).events.find((e) => e.type === 'journal-entry-refused' && /rolled back by the database/.test(JSON.stringify(e.detail))),
      8000,
      'the failed filing',
    );
    expect(refusal).toBeDefined();
    expect(db.prepare("SELECT COUNT(*) FROM journal_calls j JOIN names t ON t.id = j.tool WHERE t.name = 'create_entities'").pluck().get()).toBe(0);
    // the agent's trigger goes (the person repairs the database): every call is filed, each with its inverse
    db.exec('DROP TRIGGER agent_jam');
    db.close();
    const filed = await finished(home, 'create_entities', 3);
    expect(filed.map((h) => (JSON.parse(h.arguments) as { entities: { name: string }[] }).entities[0]!.name).sort()).toEqual(names);
    for (const h of filed) {
      expect(h).toMatchObject({ decision: 'allow', outcome: 'ok', undo: { available: true, kind: 'inverse', inverse: 'delete_entities' } });
      expect((await cliUndo(home, [h.id])).report).toMatchObject({ ok: true, kind: 'inverse' });
    }
    expect(readFileSync(memoryFile, 'utf8').trim()).toBe('');
  });

  test('create_entities=delete_entities:result:entityNames=entities.name, declared by the person, is undone; the same --undo flag alone is not', async () => {
    const home = tempDir();
    const memoryFile = join(home, 'memory.jsonl');
    await startDaemon(home);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        CLI, 'wrap', '--name', 'memory', '--client', 'test-client',
        // what a config entry says: evidence only, until the person declares the same (`airlock inverses set`)
        '--undo', 'create_entities=delete_entities:result:entityNames=entities.name',
        // a declaration naming a tool the server does not list is refused once it has listed its tools
        '--undo', 'add_observations=remove_observations',
        '--', process.execPath, MEMORY,
      ],
      env: { ...(process.env as Record<string, string>), AIRLOCK_HOME: home, MEMORY_FILE_PATH: memoryFile },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'airlock-test', version: '1.0.0' });
    await client.connect(transport);
    onCleanup(() => client.close().catch(() => {}));

    const refused = untilBroker(home, (e) => e.type === 'inverse-refused', async (c) => (await c.call('events', { limit: 50 })).events.find((e) => e.type === 'inverse-refused'), 8000, 'the refusal');
    await client.listTools();
    expect((await refused).detail).toMatchObject({ spec: 'add_observations=remove_observations', problems: ['remove_observations (the inverse of add_observations) is not one of the server\'s tools'] });
    // the session says the flags are not applied: the person has declared neither
    const ignored = await untilBroker(home, (e) => e.type === 'wrap-flags-ignored', async (c) => (await c.call('events', { limit: 50 })).events.find((e) => e.type === 'wrap-flags-ignored'), 8000, 'the ignored flags');
    expect(ignored.detail).toMatchObject({ client: 'test-client', flags: ['--undo create_entities=delete_entities:result:entityNames=entities.name', '--undo add_observations=remove_observations'] });
    await untilBroker(home, () => true, async (c) => ((await c.call('catalog', { server: 'memory' })).length > 0 ? true : undefined), 8000, 'the tools of memory');

    writeFileSync(memoryFile, JSON.stringify({ type: 'entity', name: 'Kept', entityType: 'thing', observations: ['was there before'] }) + '\n');
    const entities = [
      { name: 'Airlock', entityType: 'project', observations: ['gates tool calls'] },
      // already there: create_entities does not create it again, so its undo must not delete it
      { name: 'Kept', entityType: 'thing', observations: [] },
    ];

    // the flag alone: the call would not be undoable (the ticket says so before approval); denied, it never ran
    const flagged = client.callTool({ name: 'create_entities', arguments: { entities } });
    const flaggedTicket = await waitForTicket(home, 'create_entities');
    expect((flaggedTicket as unknown as { undoable: unknown }).undoable).toBeNull();
    await cli(home, ['deny', flaggedTicket.id]);
    expect((await flagged).isError).toBe(true);
    expect(readFileSync(memoryFile, 'utf8')).not.toContain('gates tool calls');

    // the person declares it (and cannot declare one naming a tool the server does not list)
    const unlisted = await cli(home, ['inverses', 'set', 'memory', 'add_observations=remove_observations']);
    expect(unlisted.code).not.toBe(0);
    expect(unlisted.stderr).toContain('remove_observations (the inverse of add_observations) is not one of the server\'s tools');
    expect((await cli(home, ['inverses', 'set', 'memory', 'create_entities=delete_entities:result:entityNames=entities.name'])).code).toBe(0);

    const call = client.callTool({ name: 'create_entities', arguments: { entities } });
    const ticket = await waitForTicket(home, 'create_entities');
    expect(ticket.id).not.toBe(flaggedTicket.id);
    expect((ticket as unknown as { undoable: unknown }).undoable).toEqual({ kind: 'inverse', inverse: 'delete_entities' });
    await cli(home, ['approve', ticket.id]);
    expect((await call).isError).toBeFalsy();
    expect(readFileSync(memoryFile, 'utf8')).toContain('gates tool calls');

    const [entry] = (await finished(home, 'create_entities', 2)).filter((h) => h.outcome === 'ok');
    expect(entry!.ticketId).toBe(ticket.id);
    expect(entry!.undo).toMatchObject({ available: true, kind: 'inverse', inverse: 'delete_entities' });
    // the inverse is a call like any other: delete_entities is destructive, so it asks, marked as this undo
    const undoing = cliUndo(home, [entry!.id]);
    const inverseTicket = await waitForTicket(home, 'delete_entities');
    expect(inverseTicket).toMatchObject({ undoOf: entry!.id, arguments: { entityNames: ['Airlock'] } });
    await cli(home, ['approve', inverseTicket.id]);
    const { code, report } = await undoing;
    expect(code).toBe(0);
    expect(report).toMatchObject({ ok: true, kind: 'inverse', residue: [] });
    const graph = readFileSync(memoryFile, 'utf8');
    expect(graph).not.toContain('Airlock');
    expect(graph).toContain('was there before');

    // the inverse call is journaled as what ran: delete_entities with the names, approved by you, as an undo
    const history = await cliJson<HistoryItem[]>(home, ['history']);
    expect(history.find((h) => h.id === report.undoId)).toMatchObject({
      client: 'test-client',
      tool: 'delete_entities',
      decidedBy: 'user',
      reasons: expect.arrayContaining([`undo of call ${entry!.id} (create_entities), asked for by you`]),
      arguments: JSON.stringify({ entityNames: ['Airlock'] }),
      outcome: 'ok',
      undo: { available: false, reason: 'Airlock cannot redo an inverse call', undoOf: entry!.id },
    });
    expect(history.find((h) => h.id === entry!.id)!.undo).toMatchObject({ state: 'undone', undoneBy: report.undoId });
  });
});
