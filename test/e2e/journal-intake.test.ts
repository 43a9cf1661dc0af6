/**
 * The journal's intake with real processes: a wrapper's batch is on disk (the intake's file) once the broker
 * acknowledges it, before it is filed into the journal's tables; a broker killed in between files it at its next start; and a reader during a
 * burst sees every call acknowledged so far; files the agent puts under the intake's names neither stop the broker
 * nor are written through, and calls are journaled after them. Ground truth is the fixture server's own log of what it ran and the
 * database file on disk.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { searchTerms } from '../../proxy-core/src/broker/db/queries.js';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, executedCalls, waitFor, type Wrapped } from '../helpers/airlock.js';
import { startBroker, wrapFixture } from '../helpers/e2e.js';

afterEach(cleanup);

/** Echo calls, a few at a time, each with a unique text, until stopped. */
function load(w: Wrapped, name: string) {
  let stop = false;
  let n = 0;
  const lane = async () => {
    while (!stop) await w.client.callTool({ name: 'echo', arguments: { text: `${name}-${++n}` } }).catch(() => {});
  };
  const lanes = Promise.all(Array.from({ length: 4 }, lane));
  return {
    get sent() {
      return n;
    },
    stop: () => {
      stop = true;
      return lanes;
    },
  };
}

function readDb<T>(home: string, read: (db: Database.Database) => T): T {
  const db = new Database(join(home, 'airlock.db'), { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The batches the intake's files hold on disk: their seqs, and their entries' ids. */
const intakeOnDisk = (home: string) => {
  const lines = readdirSync(home)
    .filter((f) => f.startsWith('journal-intake.'))
    .flatMap((f) => readFileSync(join(home, f), 'utf8').split('\n'))
    .filter((l) => l.includes('\t'));
  const rows = lines.map((l) => ({ seq: (JSON.parse(l.slice(0, l.indexOf('\t'))) as { seq: number }).seq, entries: l.slice(l.indexOf('\t') + 1) }));
  const entries = rows.flatMap((r) => JSON.parse(r.entries) as { id: string; outcome?: string; arguments?: unknown }[]);
  return { batches: rows.length, seqs: rows.map((r) => r.seq), text: rows.map((r) => r.entries).join('\n'), ids: entries.map((e) => e.id), entries };
};

/**
 * Has the call whose arguments hold `text` had its last copy taken in (on disk in the intake, or filed)? A call
 * still running when a batch went has a first copy with its arguments and `pending`; its end follows in a later
 * batch, without them.
 */
const endTakenIn = (home: string, text: string): boolean => {
  const taken = intakeOnDisk(home).entries;
  const filed = readDb(home, (db) => db.prepare('SELECT id, outcome FROM journal WHERE arguments LIKE ?').all(`%${text}%`) as { id: string; outcome: string }[]);
  const ids = new Set([...taken.filter((e) => typeof e.arguments === 'string' && e.arguments.includes(text)).map((e) => e.id), ...filed.map((r) => r.id)]);
  const ended = (outcome: string | undefined) => outcome !== undefined && outcome !== 'pending';
  return [...ids].some((id) => filed.some((r) => r.id === id && ended(r.outcome)) || taken.some((e) => e.id === id && ended(e.outcome)));
};

const echoTexts = (log: string) => new Set(executedCalls(log, 'echo').map((e) => String((e.arguments as { text?: unknown }).text)));

describe("the journal's intake", () => {
  test('acknowledged batches are on disk before they are filed: a broker killed in between files them at its next start', async () => {
    const { home, daemon, broker } = await startBroker({ allow: ['*'], settings: { tripwire: 'off' } });
    const { fx, w } = await wrapFixture(home);
    const l = load(w, 'k');
    // calls keep coming, so the broker files nothing yet (it waits for a quiet moment): frozen with batches taken
    // in and not filed (a stall of the load can let it file them: then it is let go and caught again), then killed
    await waitFor(() => l.sent > 200, 20_000, 'calls to run');
    let taken = { batches: 0, seqs: [] as number[], ids: [] as string[] };
    for (let attempt = 0; attempt < 50 && taken.batches === 0; attempt++) {
      daemon.proc.kill('SIGSTOP');
      taken = intakeOnDisk(home);
      if (taken.batches === 0) {
        daemon.proc.kill('SIGCONT');
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    daemon.proc.kill('SIGKILL');
    await new Promise((r) => daemon.proc.once('exit', r));
    await l.stop();
    expect(taken.ids.length).toBeGreaterThan(0);
    broker.close();

    await startBroker({ home });
    const client = await BrokerClient.connect({ dir: home, role: 'cli' });
    try {
      // filed at start: the batches the intake held are gone from it (what the wrapper sends again once reconnected
      // comes as new ones), and the journal holds every entry they held, and every call the server ran
      expect(intakeOnDisk(home).seqs.filter((seq) => taken.seqs.includes(seq))).toEqual([]);
      const history = await client.call('history', { limit: 10_000, summary: true });
      const journaled = new Set(history.calls.map((c) => c.id));
      expect(taken.ids.filter((id) => !journaled.has(id))).toEqual([]);
      // what the wrapper held unacknowledged when the broker died it sends again once reconnected
      const journaledTexts = async () => new Set((await client.call('history', { limit: 10_000 })).calls.filter((c) => c.tool === 'echo').map((c) => String((JSON.parse(c.arguments) as { text: string }).text)));
      await waitFor(async () => {
        const texts = await journaledTexts();
        return [...echoTexts(fx.log)].every((t) => texts.has(t));
      }, 20_000, 'every call the server ran in the journal').catch(() => {});
      const texts = await journaledTexts();
      expect([...echoTexts(fx.log)].filter((t) => !texts.has(t))).toEqual([]);
    } finally {
      client.close();
    }
  }, 60_000);

  test("what the agent puts under the intake's names in the data dir neither stops the broker nor lets a call go unjournaled", async () => {
    const first = await startBroker({ allow: ['*'], settings: { tripwire: 'off' } });
    const { home } = first;
    first.broker.close();
    first.daemon.proc.kill('SIGTERM');
    await new Promise((r) => first.daemon.proc.once('exit', r));
    // a 1 GB file of no newline (sparse), a folder, a FIFO and a link to a file of the person's, at intake names
    const gen = Date.now() + 10_000;
    const huge = join(home, `journal-intake.${gen}`);
    writeFileSync(huge, '{"seq":1,"session":"s","client":"agent","server":"fs","at":1,"n":1}\t');
    truncateSync(huge, 1024 ** 3);
    mkdirSync(join(home, `journal-intake.${gen + 1}`));
    execFileSync('mkfifo', [join(home, `journal-intake.${gen + 2}`)]);
    const notes = join(home, 'notes.txt');
    writeFileSync(notes, 'mine\n');
    symlinkSync(notes, join(home, `journal-intake.${gen + 3}`));

    const { broker, daemon } = await startBroker({ home });
    const { fx, w } = await wrapFixture(home);
    await w.client.callTool({ name: 'echo', arguments: { text: 'after-the-plant' } });
    // ground truth: the server ran it, and the journal on disk holds it
    expect(echoTexts(fx.log).has('after-the-plant')).toBe(true);
    await waitFor(async () => (await broker.call('history', { text: 'after-the-plant', limit: 5 })).calls.length === 1, 10_000, 'the call journaled');
    expect(readDb(home, (db) => db.prepare("SELECT COUNT(*) FROM journal WHERE arguments LIKE '%after-the-plant%'").pluck().get())).toBe(1);
    // the broker said what it could not read, held none of it, and wrote nothing through the link
    const said = (await broker.call('events', { limit: 50 })).events.filter((e) => e.type === 'journal-entry-refused').map((e) => String((e.detail as { error: string }).error));
    expect(said.some((e) => /line\(s\) of the journal's intake could not be read/.test(e))).toBe(true);
    expect(readFileSync(notes, 'utf8')).toBe('mine\n');
    // the long line was cut off (and the file, holding nothing to file, removed)
    expect(readdirSync(home).filter((f) => f.startsWith('journal-intake.') && statSync(join(home, f)).isFile() && statSync(join(home, f)).size > 1024 * 1024)).toEqual([]);
    expect(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${daemon.proc.pid}/status`, 'utf8'))?.[1]) / 1024).toBeLessThan(512);
  }, 60_000);

  test('a reader during a burst sees every call acknowledged so far: the search files what waits first', async () => {
    const { home, broker } = await startBroker({ allow: ['*'], settings: { tripwire: 'off' } });
    const { w } = await wrapFixture(home);
    const l = load(w, 'burst');
    await waitFor(async () => ((await broker.call('status', {})).journalPending ?? 0) > 0, 20_000, 'entries taken in and not yet filed');
    // a call answered now, its entry acknowledged once its batch is taken in: searched for by its text
    await w.client.callTool({ name: 'echo', arguments: { text: 'needle-in-the-burst' } });
    await waitFor(() => endTakenIn(home, 'needle-in-the-burst'), 10_000, "the needle's end taken in");
    const found = await broker.call('history', { text: 'needle-in-the-burst', limit: 10 });
    await l.stop();
    expect(found.calls.map((c) => [c.tool, c.outcome])).toEqual([['echo', 'ok']]);
  }, 60_000);

  test('a text deep in long arguments is found while the calls go on, before the index holds it, and the same once a quiet moment has indexed it', async () => {
    const { home, broker } = await startBroker({ allow: ['*'], settings: { tripwire: 'off' } });
    const { w } = await wrapFixture(home);
    const l = load(w, 'steady');
    const listed = () => readDb(home, (db) => db.prepare('SELECT j.id FROM journal_search_rest r JOIN journal_calls j ON j.seq = r.seq').pluck().all() as string[]);
    const indexed = (text: string) =>
      readDb(home, (db) => db.prepare('SELECT j.id FROM journal_search s JOIN journal_calls j ON j.seq = s.rowid WHERE journal_search MATCH ?').pluck().all(searchTerms(text)) as string[]);
    // 6,000 characters before the text: past the head the index takes when the call is filed. While the calls go on
    // its rest waits for a quiet moment (a pause in the load can bring one: tried again with a new text then)
    let seen: { needle: string; id: string } | undefined;
    for (let i = 0; i < 5 && !seen; i++) {
      const needle = `deep-needle-${i}`;
      await w.client.callTool({ name: 'echo', arguments: { text: `${'p'.repeat(6000)} ${needle} ${'q'.repeat(100)}` } });
      await waitFor(() => endTakenIn(home, needle), 10_000, 'the long call taken in');
      const found = await broker.call('history', { text: needle.toUpperCase(), limit: 10 });
      expect(found.calls.map((c) => c.outcome)).toEqual(['ok']);
      // still listed after the search, so listed during it: the index did not hold the text, the search found it
      if (listed().includes(found.calls[0]!.id)) seen = { needle, id: found.calls[0]!.id };
    }
    expect(seen).toBeDefined();
    await l.stop();
    await waitFor(() => listed().length === 0, 20_000, 'the rest of long arguments indexed in a quiet moment');
    expect(indexed(seen!.needle)).toEqual([seen!.id]);
    expect((await broker.call('history', { text: seen!.needle, limit: 10 })).calls.map((c) => c.id)).toEqual([seen!.id]);
  }, 60_000);
});
