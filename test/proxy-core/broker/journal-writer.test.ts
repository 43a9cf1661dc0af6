/**
 * The journal writer on its own, over a real store: every batch of a tick is taken in in one transaction and
 * acknowledged after it; taken-in batches are filed into the journal once no batch came for QUIET_MS (a filing
 * begun so stops at the next batch), what waited MAX_WAIT_MS whatever comes, at once past MAX_PENDING entries or
 * for a reader, in bounded transactions a turn of the event loop apart, in order; the broker's stop files
 * everything at once. A failed intake rejects
 * only the batches it held; a failed filing leaves its batches in the intake, tried again RETRY_MS later by itself
 * (said once while its cause stays the same).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import {
  JournalWriter,
  MAX_BYTES_PER_COMMIT,
  MAX_ENTRIES_PER_COMMIT,
  MAX_PENDING,
  MAX_PENDING_BYTES,
  MAX_WAIT_MS,
  QUIET_MS,
  SEARCH_REST_CHARS,
  SEARCH_REST_MAX,
  SYNC_MAX,
  SYNC_MAX_BYTES,
  YIELD_MS,
} from '../../../proxy-core/src/broker/journal-writer.js';
import type { Session } from '../../../proxy-core/src/broker/sessions.js';
import { Store } from '../../../proxy-core/src/broker/db/store.js';
import type { BrokerEvent } from '../../../proxy-core/src/protocol/api.js';
import { RawJournal } from '../../../proxy-core/src/protocol/methods/journal.js';
import { RETRY_MS } from '../../../proxy-core/src/broker/journal-indexer.js';
import { callRecord } from '../../helpers/records.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { countTurns } from '../../helpers/turns.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const session = (id: string) => ({ info: { id, client: 'cursor', server: 'fs' } }) as unknown as Session;
const batch = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => callRecord({ id: `${prefix}-${i}` }));
const turn = () => new Promise((r) => setImmediate(r));
/** The intake's lines on disk in `dir` (a batch each). */
const intakeLines = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.startsWith('journal-intake.'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean));
/** Let the writer's turns run (what it does a turn at a time), at most `n` of them. */
const turns = async (n = 50) => {
  for (let i = 0; i < n; i++) await turn();
};

function setup(o: { failIntakeAt?: number; failMoveAt?: number; dir?: string; busy?: () => boolean } = {}) {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'al-journal-writer-'));
  if (!o.dir) dirs.push(dir);
  const clock = new FakeClock();
  const store = new Store(join(dir, 'airlock.db'), { now: () => clock.now() });
  stores.push(store);
  /** Entries per filing transaction; a failed one is negative. */
  const commits: number[] = [];
  const move = store.moveIntake.bind(store);
  store.moveIntake = (groups, upTo) => {
    const count = groups.reduce((a, g) => a + g.records.length, 0);
    if (commits.length === o.failMoveAt) {
      commits.push(-count);
      throw new Error('disk I/O error');
    }
    commits.push(count);
    return move(groups, upTo);
  };
  let intakes = 0;
  const append = store.intake.append.bind(store.intake);
  store.intake.append = (batches) => {
    if (intakes++ === o.failIntakeAt) throw new Error('database or disk is full');
    append(batches);
  };
  const published: BrokerEvent[] = [];
  const refused: string[] = [];
  const writer = new JournalWriter({ store, clock, publish: (e) => published.push(...e), committed: () => {}, refused: (error) => refused.push(error), ...(o.busy ? { busy: o.busy } : {}) });
  store.fileIntake = () => writer.catchUp();
  const ids = () => (store.db.prepare('SELECT id FROM journal ORDER BY seq').all() as { id: string }[]).map((r) => r.id);
  return { store, writer, commits, clock, published, refused, ids, dir };
}

describe('the journal writer', () => {
  test('a tick\'s batches are taken in together and acknowledged; they are filed once no batch came for QUIET_MS, in bounded transactions a turn apart, in order', async () => {
    const { writer, commits, clock, ids, published, dir } = setup();
    const size = 300;
    const wrappers = 8;
    const acks = Array.from({ length: wrappers }, (_, w) => writer.write(session(`s${w}`), batch(`w${w}`, size)));
    expect(await Promise.all(acks)).toEqual(Array.from({ length: wrappers }, () => ({ acked: size })));
    // on disk, in the intake; nothing filed yet
    expect(writer.pending).toBe(size * wrappers);
    expect(intakeLines(dir)).toHaveLength(wrappers);
    expect(commits).toEqual([]);
    clock.advance(QUIET_MS - 1);
    await turns(5);
    expect(commits).toEqual([]);
    const turnCounter = countTurns();
    clock.advance(1);
    await turns();
    const seen = turnCounter.stop();
    // 2,400 entries: never more than the bound in one commit, no batch split, a turn of the event loop apart
    expect(commits.reduce((a, b) => a + b, 0)).toBe(size * wrappers);
    expect(Math.max(...commits)).toBeLessThanOrEqual(MAX_ENTRIES_PER_COMMIT);
    expect(commits.every((c) => c % size === 0)).toBe(true);
    expect(commits.length).toBeGreaterThanOrEqual(Math.ceil((size * wrappers) / MAX_ENTRIES_PER_COMMIT));
    expect(seen).toBeGreaterThanOrEqual(commits.length - 1);
    expect(writer.pending).toBe(0);
    expect(intakeLines(dir)).toEqual([]);
    expect(ids()).toEqual(Array.from({ length: wrappers }, (_, w) => batch(`w${w}`, size).map((r) => r.id)).flat());
    // every call's event was published, in the journal's order
    expect(published.map((e) => (e.detail as { id: string }).id)).toEqual(ids());
  });

  test('big entries are filed in transactions of at most MAX_BYTES_PER_COMMIT of them (a batch past it alone), a turn apart', async () => {
    const { writer, commits, clock, ids } = setup();
    // calls that each wrote a big file: 64 KB of arguments kept (and indexed) apiece, 5 to a batch
    const content = 'x'.repeat(64 * 1024);
    const perBatch = 5;
    const batches = 12;
    for (let b = 0; b < batches; b++) {
      const entries = Array.from({ length: perBatch }, (_, i) => callRecord({ id: `big-${b}-${i}`, arguments: JSON.stringify({ path: `/f${b}`, content }) }));
      await writer.write(session(`s${b}`), entries);
    }
    // one batch over the bound goes alone
    await writer.write(session('huge'), Array.from({ length: 20 }, (_, i) => callRecord({ id: `huge-${i}`, arguments: JSON.stringify({ content }) })));
    clock.advance(QUIET_MS);
    await turns(100);
    expect(commits.reduce((a, b) => a + b, 0)).toBe(perBatch * batches + 20);
    // 60 entries of some 64 KB: far under MAX_ENTRIES_PER_COMMIT, so only the byte bound splits them
    const perCommit = Math.floor(MAX_BYTES_PER_COMMIT / (perBatch * content.length)) * perBatch;
    expect(Math.max(...commits.slice(0, -1))).toBeLessThanOrEqual(Math.max(perCommit, perBatch));
    expect(commits.length).toBeGreaterThanOrEqual(Math.ceil((perBatch * batches) / Math.max(perCommit, perBatch)) + 1);
    expect(commits.at(-1)).toBe(20);
    expect(commits.every((c) => c % perBatch === 0)).toBe(true);
    expect(ids()).toHaveLength(perBatch * batches + 20);
  });

  test('the rest of long arguments is indexed once all is filed, in a quiet moment, a bounded transaction a turn; while calls come only past SEARCH_REST_MAX waiting', async () => {
    const { writer, store, clock } = setup();
    const rest = store.journal.searchRest;
    const done: number[] = [];
    const complete = rest.complete.bind(rest);
    rest.complete = (max) => {
      const n = complete(max);
      done.push(n);
      return n;
    };
    // calls that each wrote a file of 64 KB, 5 to a batch
    const content = 'y'.repeat(64 * 1024);
    for (let b = 0; b < 6; b++) await writer.write(session(`s${b}`), Array.from({ length: 5 }, (_, i) => callRecord({ id: `big-${b}-${i}`, arguments: JSON.stringify({ content }) })));
    clock.advance(QUIET_MS);
    while (done.length === 0) await turn();
    expect(writer.pending).toBe(0);
    // the calls are back: what is left waits for the next quiet moment
    await writer.write(session('again'), batch('again', 1));
    const soFar = done.length;
    await turns();
    expect(done.length).toBe(soFar);
    expect(rest.waiting()).toBeGreaterThan(0);
    clock.advance(QUIET_MS);
    await turns(100);
    expect(rest.waiting()).toBe(0);
    const perTx = Math.max(1, Math.ceil(SEARCH_REST_CHARS / content.length));
    expect(done.slice(0, -1).every((n) => n >= 1 && n <= perTx)).toBe(true);
    expect(done.reduce((a, b) => a + b, 0)).toBe(30);
    // past SEARCH_REST_MAX waiting, it goes on while calls come, down to SEARCH_REST_MAX
    const over = Array.from({ length: SEARCH_REST_MAX + 40 }, (_, i) => callRecord({ id: `many-${i}`, arguments: JSON.stringify({ content: 'z'.repeat(5000) }) }));
    for (let i = 0; i < over.length; i += 200) await writer.write(session('many'), over.slice(i, i + 200));
    done.length = 0;
    // a batch every 5 ms: never a quiet moment, so they are filed at the deadline, and the rest indexed after them
    for (let i = 0; i < (MAX_WAIT_MS + 500) / 5; i++) {
      await writer.write(session('busy'), batch(`busy-${i}`, 1));
      clock.advance(5);
      await turns(3);
    }
    expect(store.db.prepare("SELECT COUNT(*) FROM journal_calls WHERE id LIKE 'many-%'").pluck().get()).toBe(over.length);
    expect(done.length).toBeGreaterThan(0);
    expect(rest.waiting()).toBeLessThanOrEqual(SEARCH_REST_MAX);
    expect(rest.waiting()).toBeGreaterThan(SEARCH_REST_MAX - 100);
  });

  test('a request under way is answered before the next filing transaction starts, for YIELD_MS at most', async () => {
    let busy = true;
    const { writer, commits, clock } = setup({ busy: () => busy });
    for (let w = 0; w < 3; w++) await writer.write(session(`s${w}`), batch(`w${w}`, MAX_ENTRIES_PER_COMMIT));
    clock.advance(QUIET_MS);
    await turns(20);
    // the filing waits while the request is under way
    expect(commits).toEqual([]);
    busy = false;
    clock.advance(1);
    while (commits.length === 0) await turn();
    // busy again between two transactions: the next waits, then goes once YIELD_MS has passed (no starving)
    busy = true;
    const before = commits.length;
    await turns(20);
    expect(commits.length).toBe(before);
    clock.advance(YIELD_MS);
    await turns(10);
    expect(commits.length).toBeGreaterThan(before);
    busy = false;
    clock.advance(1);
    await turns(20);
    expect(commits.reduce((a, b) => a + b, 0)).toBe(3 * MAX_ENTRIES_PER_COMMIT);
  });

  test('batches that keep coming are filed MAX_WAIT_MS after the oldest; past MAX_PENDING entries, at once', async () => {
    const { writer, commits, clock } = setup();
    for (let t = 0; t < MAX_WAIT_MS; t += QUIET_MS / 2) {
      await writer.write(session('a'), batch(`t${t}`, 1));
      clock.advance(QUIET_MS / 2);
      await turns(3);
    }
    expect(commits.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const filed = commits.reduce((a, b) => a + b, 0);
    // the deadline came while batches still arrived: those before it were filed
    expect(filed).toBeLessThanOrEqual(MAX_WAIT_MS / (QUIET_MS / 2));
    commits.length = 0;
    await writer.write(session('b'), batch('big', MAX_PENDING));
    await turns(200);
    expect(commits.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(MAX_PENDING);
  });

  test('past MAX_PENDING_BYTES of entries waiting, they are filed at once, however few', async () => {
    const { writer, commits } = setup();
    const big = 'x'.repeat(1024 * 1024);
    const count = Math.ceil(MAX_PENDING_BYTES / big.length) + 1;
    const entries = Array.from({ length: count }, (_, i) => callRecord({ id: `big-${i}`, arguments: JSON.stringify({ big }) }));
    await writer.write(session('a'), entries.slice(0, count - 2));
    await turns(5);
    expect(commits).toEqual([]);
    await writer.write(session('a'), entries.slice(count - 2));
    await turns(20);
    expect(commits.reduce((a, b) => a + b, 0)).toBe(count);
    expect(writer.pending).toBe(0);
  });

  test('a batch that comes while the backlog is filed is acknowledged at once, and the filing waits for the next quiet moment', async () => {
    const { writer, commits, clock } = setup();
    await writer.write(session('a'), batch('a', MAX_ENTRIES_PER_COMMIT));
    await writer.write(session('b'), batch('b', MAX_ENTRIES_PER_COMMIT));
    clock.advance(QUIET_MS);
    while (commits.length === 0) await turn();
    const before = commits.length;
    let ackedAt = -1;
    const acked = writer.write(session('c'), batch('c', 1)).then(() => (ackedAt = commits.length));
    await turns();
    await acked;
    expect(ackedAt).toBe(before);
    // the calls are back: nothing more is filed while they come
    expect(commits.length).toBe(before);
    clock.advance(QUIET_MS - 1);
    await turns();
    expect(commits.length).toBe(before);
    clock.advance(1);
    await turns();
    expect(writer.pending).toBe(0);
  });

  test('while batches never stop, what waited MAX_WAIT_MS is filed whatever comes meanwhile; what came after waits for its own deadline', async () => {
    const { writer, commits, clock } = setup();
    // a batch every QUIET_MS / 2: never a quiet moment
    const every = QUIET_MS / 2;
    let n = 0;
    const tick = async () => {
      await writer.write(session('a'), batch(`t${n++}`, MAX_ENTRIES_PER_COMMIT / 2));
      clock.advance(every);
      await turns(3);
    };
    for (let t = 0; t < MAX_WAIT_MS - every; t += every) await tick();
    expect(commits).toEqual([]);
    await tick();
    // the deadline: everything that waited then is filed, a transaction a turn, batches still coming in between
    const due = n;
    while (writer.pending > (n - due) * (MAX_ENTRIES_PER_COMMIT / 2)) await tick();
    const filedAtDeadline = commits.reduce((a, b) => a + b, 0);
    expect(filedAtDeadline).toBeGreaterThanOrEqual(due * (MAX_ENTRIES_PER_COMMIT / 2));
    // and then the filing stops: what came since waits, though batches keep coming
    const stoppedAt = commits.length;
    for (let i = 0; i < 20; i++) await tick();
    expect(commits.length).toBe(stoppedAt);
    expect(writer.pending).toBeGreaterThan(0);
    // once they stop, the rest is filed
    clock.advance(QUIET_MS);
    await turns(100);
    expect(writer.pending).toBe(0);
  });

  test('a reader sees every batch taken in: the journal, the events and a count read now file what waits', async () => {
    const { store, writer, commits } = setup();
    await writer.write(session('a'), batch('r', 3));
    expect(commits).toEqual([]);
    expect(store.history({ limit: 10 }).calls.map((c) => c.id)).toEqual(['r-2', 'r-1', 'r-0']);
    expect(commits).toEqual([3]);
    await writer.write(session('a'), batch('s', 2));
    expect(store.eventsSince(0, 100).filter((e) => e.type === 'call')).toHaveLength(5);
    await writer.write(session('a'), batch('u', 1));
    expect(store.journalCount()).toBe(6);
  });

  test("an event stored while a batch waits comes before its calls in the log; their events say when the batch arrived", async () => {
    const { store, writer, clock } = setup();
    await writer.write(session('a'), batch('before', 2));
    const arrived = clock.now();
    clock.advance(5);
    store.addEvent('estop-on', null, null, { by: 'user' });
    const log = store.eventsSince(0, 100);
    expect(log.map((e) => (e.type === 'call' ? (e.detail as { id: string }).id : e.type))).toEqual(['estop-on', 'before-0', 'before-1']);
    expect(log.filter((e) => e.type === 'call').map((e) => e.at)).toEqual([arrived, arrived]);
    expect(log[0]!.at).toBe(arrived + 5);
  });

  test('a read files at most SYNC_MAX entries at once; the rest follows a transaction a turn', async () => {
    const { store, writer, commits } = setup();
    for (let w = 0; w < 4; w++) await writer.write(session(`s${w}`), batch(`w${w}`, SYNC_MAX / 2));
    expect(store.journalCount()).toBe(SYNC_MAX);
    expect(writer.pending).toBe(SYNC_MAX);
    await turns();
    expect(store.db.prepare('SELECT COUNT(*) FROM journal').pluck().get()).toBe(2 * SYNC_MAX);
    expect(commits.reduce((a, b) => a + b, 0)).toBe(2 * SYNC_MAX);
  });

  test('a read files at most SYNC_MAX_BYTES of big entries at once; the rest follows a transaction a turn', async () => {
    const { store, writer } = setup();
    const content = 'x'.repeat(64 * 1024);
    const perBatch = 8;
    const batches = Math.ceil((2 * SYNC_MAX_BYTES) / (perBatch * content.length));
    for (let b = 0; b < batches; b++) await writer.write(session(`s${b}`), Array.from({ length: perBatch }, (_, i) => callRecord({ id: `big-${b}-${i}`, arguments: JSON.stringify({ content }) })));
    const filedNow = store.journalCount();
    // some, not all: a read holds the broker for about SYNC_MAX_BYTES of filing, not for the whole backlog
    expect(filedNow).toBeGreaterThan(0);
    expect(filedNow).toBeLessThan(batches * perBatch);
    expect(filedNow * content.length).toBeLessThanOrEqual(SYNC_MAX_BYTES + MAX_BYTES_PER_COMMIT + perBatch * content.length);
    await turns(200);
    expect(store.db.prepare('SELECT COUNT(*) FROM journal').pluck().get()).toBe(batches * perBatch);
  });

  test('a reader that settles first files what waited when it asked, one bounded transaction a turn, and what came after at its read', async () => {
    const { store, writer, commits } = setup();
    for (let w = 0; w < 3; w++) await writer.write(session(`s${w}`), batch(`w${w}`, MAX_ENTRIES_PER_COMMIT));
    const turnCounter = countTurns();
    const settling = writer.settle();
    // a batch arriving while it settles is not waited for
    const late = writer.write(session('late'), batch('late', 5));
    await settling;
    expect(turnCounter.stop()).toBeGreaterThanOrEqual(2);
    expect(commits).toEqual([MAX_ENTRIES_PER_COMMIT, MAX_ENTRIES_PER_COMMIT, MAX_ENTRIES_PER_COMMIT]);
    await late;
    expect(store.journalCount()).toBe(3 * MAX_ENTRIES_PER_COMMIT + 5);
    expect(commits.at(-1)).toBe(5);
  });

  test('a batch as its bytes is taken as it is and checked when filed: entries that are not call records, bytes that are not an array, or more entries than the batch said it held, are refused and said', async () => {
    const { writer, store, refused } = setup();
    const good = callRecord({ id: 'raw-1' });
    const params = Buffer.from(`{"n":3,"entries":[${JSON.stringify(good)},{"id":"x"},42]}`);
    const raw = RawJournal.of(params)!;
    expect(raw.n).toBe(3);
    expect(await writer.write(session('a'), raw)).toEqual({ acked: 3 });
    const broken = RawJournal.of(Buffer.from('{"n":1,"entries":[{"id":"cut"]}'))!;
    expect(await writer.write(session('a'), broken)).toEqual({ acked: 1 });
    // more entries than the sender counted: refused whole (the count bounds a filing transaction)
    const understated = RawJournal.of(Buffer.from(`{"n":1,"entries":[${JSON.stringify(callRecord({ id: 'over-1' }))},${JSON.stringify(callRecord({ id: 'over-2' }))}]}`))!;
    expect(await writer.write(session('a'), understated)).toEqual({ acked: 1 });
    expect(store.history({ limit: 10 }).calls.map((c) => c.id)).toEqual(['raw-1']);
    expect(refused).toHaveLength(4);
    expect(refused.at(-2)).toMatch(/not a JSON array/);
    expect(refused.at(-1)).toMatch(/a journal batch of 2 entries that said it held 1/);
    expect(writer.pending).toBe(0);
  });

  test('params of any other form are not taken as bytes', () => {
    for (const text of ['{"entries":[]}', '{"n":1,"entries":[1],"lost":{"notRun":1,"executed":0}}', '{"n":x,"entries":[]}', '{"n":99999999,"entries":[]}', '{"n":1,"entries":{}}', '{"n":1}']) {
      expect(RawJournal.of(Buffer.from(text)), text).toBeUndefined();
    }
  });

  test('what was taken in and not filed when the broker stopped is filed at the next start', async () => {
    const first = setup();
    await first.writer.write(session('a'), batch('kept', 4));
    first.store.close();
    stores.splice(stores.indexOf(first.store), 1);
    const second = setup({ dir: first.dir });
    expect(second.writer.pending).toBe(4);
    second.writer.catchUp();
    expect(second.ids()).toEqual(['kept-0', 'kept-1', 'kept-2', 'kept-3']);
  });

  test('one batch larger than the bound is filed whole; the broker stopping files everything queued at once', () => {
    const { writer, commits } = setup();
    void writer.write(session('a'), batch('a', MAX_ENTRIES_PER_COMMIT + 5));
    void writer.write(session('b'), batch('b', 10));
    void writer.write(session('c'), batch('c', MAX_ENTRIES_PER_COMMIT));
    writer.flush();
    expect(commits).toEqual([MAX_ENTRIES_PER_COMMIT + 5, 10, MAX_ENTRIES_PER_COMMIT]);
  });

  test('an intake that fails rejects the batches it held; the next ones are still taken', async () => {
    const { writer, ids } = setup({ failIntakeAt: 0 });
    const first = writer.write(session('a'), batch('a', 5));
    await expect(first).rejects.toMatchObject({ code: 'journal-failed' });
    await expect(writer.write(session('b'), batch('b', 3))).resolves.toEqual({ acked: 3 });
    writer.catchUp();
    expect(ids()).toEqual(['b-0', 'b-1', 'b-2']);
  });

  test('a filing that fails leaves its batches in the intake: they are filed the next time, nothing lost or doubled', async () => {
    const { writer, commits, ids, refused, clock } = setup({ failMoveAt: 0 });
    await writer.write(session('a'), batch('a', 3));
    writer.catchUp();
    expect(commits).toEqual([-3]);
    expect(refused).toEqual([expect.stringMatching(/could not file/)]);
    expect(writer.pending).toBe(3);
    // a reader right after does not try again (nor say so again): the next try waits RETRY_MS
    writer.catchUp();
    expect(commits).toEqual([-3]);
    expect(refused).toHaveLength(1);
    clock.advance(RETRY_MS);
    writer.catchUp();
    expect(commits).toEqual([-3, 3]);
    expect(ids()).toEqual(['a-0', 'a-1', 'a-2']);
  });

  test('a filing that fails in a quiet moment is tried again RETRY_MS later by itself: no batch and no reader need come', async () => {
    const { writer, commits, ids, clock } = setup({ failMoveAt: 0 });
    await writer.write(session('a'), batch('a', 3));
    clock.advance(QUIET_MS);
    await turns();
    expect(commits).toEqual([-3]);
    expect(writer.pending).toBe(3);
    clock.advance(RETRY_MS - 1);
    await turns();
    expect(commits).toEqual([-3]);
    clock.advance(1);
    await turns();
    expect(commits).toEqual([-3, 3]);
    expect(ids()).toEqual(['a-0', 'a-1', 'a-2']);
  });

  test('a failure that lasts is tried again every RETRY_MS by itself, said when it begins and when its cause changes; once it files, nothing more is tried', async () => {
    const { store, writer, ids, clock, refused } = setup();
    let failing: string | undefined = 'database disk image is malformed';
    let tries = 0;
    const move = store.moveIntake.bind(store);
    store.moveIntake = (groups, upTo) => {
      tries++;
      if (failing) throw new Error(failing);
      return move(groups, upTo);
    };
    await writer.write(session('a'), batch('a', 2));
    clock.advance(QUIET_MS);
    await turns();
    expect(tries).toBe(1);
    for (let n = 2; n <= 5; n++) {
      clock.advance(RETRY_MS - 1);
      await turns();
      expect(tries).toBe(n - 1);
      clock.advance(1);
      await turns();
      expect(tries).toBe(n);
    }
    expect(refused).toEqual([expect.stringMatching(/could not file .*malformed/)]);
    failing = 'database is locked';
    clock.advance(RETRY_MS);
    await turns();
    expect(refused).toEqual([expect.stringMatching(/malformed/), expect.stringMatching(/could not file .*locked/)]);
    failing = undefined;
    clock.advance(RETRY_MS);
    await turns();
    expect(ids()).toEqual(['a-0', 'a-1']);
    const filedAt = tries;
    clock.advance(10 * RETRY_MS);
    await turns();
    expect(tries).toBe(filedAt);
    // a new failure after a filing is news again
    failing = 'database is locked';
    await writer.write(session('b'), batch('b', 1));
    clock.advance(QUIET_MS);
    await turns();
    expect(refused).toHaveLength(3);
  });
});
