/**
 * The wrapper's journal queue: a flood of refused calls never pushes an executed call's entry out of memory,
 * what is not kept is counted, and spilled entries come back from disk whole (the file on disk is the truth).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { CallRecord } from '../../../proxy-core/src/protocol/api.js';
import { JournalQueue, MAX_SEGMENT_BYTES, OPEN_DELAY_MS } from '../../../proxy-core/src/wrap/journal-queue.js';
import type { Segment } from '../../../proxy-core/src/wrap/journal-segment.js';
import type { JournalEntry } from '../../../proxy-core/src/wrap/journal-entry.js';
import { spillDir } from '../../../proxy-core/src/ipc/spill-file.js';
import { cleanup, tempDir } from '../../helpers/airlock.js';

// temp folders (tempDir) go after each test
afterEach(cleanup);

const record = (id: string, ran: boolean): CallRecord => ({
  id,
  client: 'c',
  server: 's',
  tool: 'echo',
  arguments: '{}',
  argsTruncated: false,
  class: 'read-only-trusted',
  reasons: [],
  decision: ran ? 'allow' : 'deny',
  decidedBy: ran ? 'class' : 'broker-down',
  detail: '',
  outcome: ran ? 'ok' : 'not-run',
  startedAt: 1,
  ...(ran ? { forwardedAt: 2 } : {}),
});

/** A record as the queue takes it: its entry (the text keeps the record's keys in order, as the encoder writes them). */
const E = (r: CallRecord): JournalEntry => ({ id: r.id, text: JSON.stringify(r), open: r.outcome === 'pending' || r.outcome === 'cancelled', executed: r.forwardedAt !== undefined });

/** What a batch says to the broker: its entries, as the broker parses them. */
const wire = (s: Segment | undefined): CallRecord[] => (s ? (JSON.parse(`[${s.wire().toString('utf8')}]`) as CallRecord[]) : []);
/** What a batch holds (the spill's copy): whole entries. */
const whole = (s: Segment): CallRecord[] => JSON.parse(`[${s.buf.subarray(0, s.len).toString('utf8')}]`) as CallRecord[];

describe('the journal queue', () => {
  let now = 1000;
  beforeEach(() => {
    now = 1000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
  });
  afterEach(() => vi.restoreAllMocks());

  test("a call's arguments go to the broker once: a copy after an acknowledged one goes without them, the spill keeps them", () => {
    const q = new JournalQueue(tempDir(), 100, () => {});
    const pending: CallRecord = { ...record('c1', true), arguments: '{"text":"x"}', outcome: 'pending' };
    q.add(E(pending));
    const first = q.batch()!;
    expect(wire(first)).toEqual([pending]);
    q.acked(first);
    const done: CallRecord = { ...pending, outcome: 'ok', finishedAt: 3 };
    q.add(E(done));
    const second = q.batch()!;
    expect(whole(second)).toEqual([done]);
    expect(wire(second)[0]).not.toHaveProperty('arguments');
    expect(wire(second)[0]).toMatchObject({ id: 'c1', outcome: 'ok', finishedAt: 3, argsTruncated: false });
    // the spill on disk is whole, whatever the broker has
    expect(q.spillHeld(true)).toBe(true);
    q.acked(second);
    // a final copy acknowledged: the call is forgotten, and a copy of it again (a replay) would carry everything
    q.add(E(done));
    expect(wire(q.batch())).toEqual([done]);
  });

  test('an acknowledged batch is written again from empty: the next batch holds only its own entries, flags and stripped arguments', () => {
    const q = new JournalQueue(tempDir(), 100, () => {});
    const opened: CallRecord = { ...record('r1', true), arguments: '{"a":1}', outcome: 'pending' };
    q.add(E(opened));
    const zero = q.batch()!;
    expect(zero.openIds).toEqual(['r1']);
    q.acked(zero);
    // r1's final copy goes without its arguments (a strip), r2 is refused (not executed), r3 still open
    const done: CallRecord = { ...opened, outcome: 'ok' };
    const refused = record('r2', false);
    const open3: CallRecord = { ...record('r3', true), outcome: 'pending' };
    for (const r of [done, refused, open3]) q.add(E(r));
    const first = q.batch()!;
    expect(first.count).toBe(3);
    expect(wire(first)[0]).not.toHaveProperty('arguments');
    q.acked(first);
    const next: CallRecord = { ...record('r4', false), arguments: '{"b":"ü"}' };
    q.add(E(next));
    const second = q.batch()!;
    // the first batch's buffer and tables again (a batch taken starts the next segment, from the spare), holding
    // nothing of what they held
    expect(second).toBe(zero);
    expect(second.count).toBe(1);
    expect(wire(second)).toEqual([next]);
    expect(whole(second)).toEqual([next]);
    expect(second.openIds).toEqual([]);
    expect(second.finalIds).toEqual([]);
    // r4 never ran: the spill keeps executed calls only, and there is none
    expect(q.spillHeld()).toBe(true);
    expect(second.flags[0]).toBe(0);
  });

  test('calls with big arguments go in batches of about MAX_SEGMENT_BYTES, each whole, in order', () => {
    const q = new JournalQueue(tempDir(), 1000, () => {});
    const big = 'x'.repeat(200 * 1024);
    const records = Array.from({ length: 12 }, (_, i) => ({ ...record(`b${i}`, true), arguments: JSON.stringify({ content: big }) }));
    for (const r of records) q.add(E(r));
    const sent: CallRecord[][] = [];
    for (let b = q.batch(); b; b = q.batch()) {
      // at most one entry past the bound: the one that crossed it
      expect(b.len - b.entry(b.count - 1).length).toBeLessThan(MAX_SEGMENT_BYTES);
      sent.push(wire(b));
      q.acked(b);
    }
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.flat()).toEqual(records);
  });

  test('the final copy written while the pending one was out is forgotten with it: the next copy carries everything', () => {
    const q = new JournalQueue(tempDir(), 100, () => {});
    const pending: CallRecord = { ...record('c3', true), outcome: 'pending' };
    q.add(E(pending));
    const first = q.batch()!;
    const done: CallRecord = { ...pending, outcome: 'ok' };
    q.add(E(done));
    // a batch not acknowledged is offered again, alone
    expect(q.batch()).toBe(first);
    q.acked(first);
    // the final copy was written before the pending one was acknowledged: it carries the arguments
    const second = q.batch()!;
    expect(wire(second)).toEqual([done]);
    q.acked(second);
    q.add(E(done));
    expect(wire(q.batch())).toEqual([done]);
  });

  test('an entry held to be built later is built when a batch or the spill takes it, at the state it has then; replaced before that, never', () => {
    const q = new JournalQueue(tempDir(), 100, () => {});
    let state: CallRecord = { ...record('l1', true), outcome: 'pending' };
    let builds = 0;
    const build = () => (builds++, E({ ...state }));
    q.addLater('l1', build);
    expect(q.size).toBe(1);
    expect(builds).toBe(0);
    // a batch before the call has been open OPEN_DELAY_MS does not take it
    now += OPEN_DELAY_MS - 1;
    expect(q.batch()).toBeUndefined();
    expect(q.openDueIn()).toBe(1);
    expect(builds).toBe(0);
    // the call moved on before anything took its entry: the batch has it as it stands now
    state = { ...state, outcome: 'ok', finishedAt: 3 };
    now += 1;
    const first = q.batch()!;
    expect(builds).toBe(1);
    expect(wire(first)).toEqual([state]);
    // built once: a second batch (the first not acknowledged yet) offers the same
    expect(q.batch()).toBe(first);
    expect(builds).toBe(1);
    q.acked(first);
    expect(q.size).toBe(0);

    // a quick call: its end replaces the copy held at forwarding before that copy was ever built
    let unbuilt = 0;
    q.addLater('l2', () => (unbuilt++, E({ ...record('l2', true), outcome: 'pending' })));
    const ended: CallRecord = { ...record('l2', true), finishedAt: 4 };
    q.add(E(ended));
    now += 2 * OPEN_DELAY_MS;
    expect(wire(q.batch())).toEqual([ended]);
    expect(unbuilt).toBe(0);
  });

  test('an entry held to be built later reaches the spill like any other: an executed call at once, the rest when the wrapper leaves', () => {
    const dir = tempDir();
    const q = new JournalQueue(dir, 100, () => {});
    q.addLater('s1', () => E({ ...record('s1', true), outcome: 'pending' }));
    q.addLater('s2', () => E(record('s2', false)));
    expect(q.spillHeld()).toBe(true);
    const ids = () => readdirSync(spillDir(dir)).flatMap((f) => new JournalQueue(tempDir(), 100, () => {}).readFile(join(spillDir(dir), f)).map((e) => e.id));
    expect(ids()).toEqual(['s1']);
    expect(q.leave()).toEqual({ notRun: 0, executed: 0 });
    expect(ids().sort()).toEqual(['s1', 's2']);
  });

  test('a new connection takes no copy as known: the next copy carries the arguments again, written before it or after', () => {
    const q = new JournalQueue(tempDir(), 100, () => {});
    const pending: CallRecord = { ...record('c2', true), outcome: 'pending' };
    const other: CallRecord = { ...record('c5', true), arguments: '{"text":"y"}', outcome: 'pending' };
    q.add(E(pending));
    q.add(E(other));
    q.acked(q.batch()!);
    // c5's end is written while the connection stands (without its arguments, as it would go then), sent after it
    const otherDone: CallRecord = { ...other, outcome: 'ok' };
    q.add(E(otherDone));
    q.connected('session-2');
    const done: CallRecord = { ...pending, outcome: 'ok' };
    q.add(E(done));
    expect(wire(q.batch())).toEqual([otherDone, done]);
  });

  test('past its bound it counts refused calls, never drops executed ones', () => {
    const q = new JournalQueue(tempDir(), 100, () => {});
    for (let i = 0; i < 10; i++) q.add(E(record(`ran-${i}`, true)));
    for (let i = 0; i < 300; i++) q.add(E(record(`refused-${i}`, false)));
    const held = wire(q.batch()).map((e) => e.id);
    expect(held.filter((id) => id.startsWith('ran-'))).toHaveLength(10);
    expect(q.size).toBe(100);
    expect(q.takeLost()).toEqual({ notRun: 210, executed: 0 });
    // executed calls are kept past the bound
    for (let i = 10; i < 20; i++) q.add(E(record(`ran-${i}`, true)));
    expect(q.size).toBe(110);
    expect(q.takeLost()).toBeNull();
  });

  test('past its bound, what is already on disk leaves memory: the replay has it', () => {
    const dir = tempDir();
    const q = new JournalQueue(dir, 100, () => {});
    // two full segments of executed calls, then the broker away: they reach the disk
    for (let i = 0; i < 2000; i++) q.add(E(record(`ran-${i}`, true)));
    expect(q.spillHeld()).toBe(true);
    const onDisk = () => readdirSync(spillDir(dir)).flatMap((f) => readFileSync(join(spillDir(dir), f), 'utf8').split('\n').filter(Boolean)).length;
    expect(onDisk()).toBe(2000);
    // memory is past the bound: the spilled segments leave it, and a refused call fits again
    q.add(E(record('refused-x', false)));
    expect(q.size).toBe(1);
    expect(q.takeLost()).toBeNull();
    expect(wire(q.batch()).map((e) => e.id)).toEqual(['refused-x']);
    expect(q.replayFiles().flatMap((f) => q.readFile(f)).map((e) => e.id)).toEqual(Array.from({ length: 2000 }, (_, i) => `ran-${i}`));
  });

  test('spills executed entries to a private file, replays them, and leaves everything else on its way out', () => {
    const dir = tempDir();
    const q = new JournalQueue(dir, 100, () => {});
    q.add(E(record('ran-1', true)));
    q.add(E(record('refused-1', false)));
    expect(q.spillHeld()).toBe(true);
    const files = q.replayFiles();
    expect(files).toHaveLength(1);
    expect(q.readFile(files[0]!).map((e) => e.id)).toEqual(['ran-1']);
    q.fileDone(files[0]!);
    expect(readdirSync(spillDir(dir))).toEqual([]);
    expect(q.leave()).toEqual({ notRun: 0, executed: 0 });
    const left = readdirSync(spillDir(dir));
    expect(left).toHaveLength(1);
    expect(statSync(join(spillDir(dir), left[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(spillDir(dir)).mode & 0o777).toBe(0o700);
    // ran-1's copy on disk was replayed (acknowledged) already: only what no file holds yet is written
    const q2 = new JournalQueue(dir, 100, () => {});
    expect(q2.readFile(join(spillDir(dir), left[0]!)).map((e) => e.id)).toEqual(['refused-1']);
  });

  test('spilled lines carry the session, and entries whose texts need escaping come back as they were', () => {
    const dir = tempDir();
    const q = new JournalQueue(dir, 100, () => {});
    q.connected('sess-1');
    const odd: CallRecord = { ...record('odd', true), tool: 'quote " nl \n lone \ud800 emoji 😀 ,"arguments":', detail: ',"argsTruncated":' };
    q.add(E(odd));
    expect(q.spillHeld()).toBe(true);
    const [file] = q.replayFiles();
    expect(q.readFile(file!)).toEqual([{ sessionId: 'sess-1', ...odd }]);
    expect(wire(q.batch())).toEqual([odd]);
  });

  test('a damaged line in a spill file is counted, the rest is read', () => {
    const dir = tempDir();
    const q = new JournalQueue(dir, 100, () => {});
    const path = join(dir, 'x.jsonl');
    writeFileSync(path, `${JSON.stringify(record('ran-1', true))}\n{"id": "cut\n[1]\n`);
    expect(q.readFile(path).map((e) => e.id)).toEqual(['ran-1']);
    expect(q.takeLost()).toEqual({ notRun: 0, executed: 2 });
  });

  test('an entry nested past what can be written again (a file someone edited) is counted, the rest is read and sent on', () => {
    const dir = tempDir();
    const q = new JournalQueue(dir, 100, () => {});
    const path = join(dir, 'x.jsonl');
    const deep = `{"id":"deep","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    writeFileSync(path, `${JSON.stringify(record('ran-1', true))}\n${deep}\n${JSON.stringify(record('ran-2', true))}\n`);
    const entries = q.readFile(path);
    expect(entries.map((e) => e.id)).toEqual(['ran-1', 'ran-2']);
    expect(() => entries.map((e) => JSON.stringify(e))).not.toThrow();
    expect(q.takeLost()).toEqual({ notRun: 0, executed: 1 });
  });
});
