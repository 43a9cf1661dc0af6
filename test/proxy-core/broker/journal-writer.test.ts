/**
 * The journal writer on its own, over a real store: batches queued in one tick share a transaction up to
 * MAX_ENTRIES_PER_COMMIT entries; what is queued beyond waits a turn of the event loop, in order; the broker's
 * stop writes everything at once. A failed commit rejects only the batches it held.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { JournalWriter, MAX_ENTRIES_PER_COMMIT } from '../../../proxy-core/src/broker/journal-writer.js';
import type { Session } from '../../../proxy-core/src/broker/sessions.js';
import { Store } from '../../../proxy-core/src/broker/db/store.js';
import { callRecord } from '../../helpers/records.js';
import { countTurns } from '../../helpers/turns.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const session = (id: string) => ({ info: { id, client: 'cursor', server: 'fs' } }) as unknown as Session;
const batch = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => callRecord({ id: `${prefix}-${i}` }));

function setup(failAt?: number) {
  const dir = mkdtempSync(join(tmpdir(), 'al-journal-writer-'));
  dirs.push(dir);
  const store = new Store(join(dir, 'airlock.db'));
  stores.push(store);
  /** Entries per transaction, and the turns of the event loop seen between the first and the last. */
  const commits: number[] = [];
  const write = store.writeJournal.bind(store);
  store.writeJournal = (records) => {
    if (commits.length === failAt) {
      commits.push(-records.length);
      throw new Error('disk I/O error');
    }
    commits.push(records.length);
    return write(records);
  };
  const writer = new JournalWriter({ store, publish: () => {}, committed: () => {}, refused: () => {} });
  return { store, writer, commits };
}

describe('the journal writer', () => {
  test("every wrapper's backlog is written in bounded transactions, a turn of the event loop apart, in order", async () => {
    const { store, writer, commits } = setup();
    const size = 700;
    const wrappers = 8;
    const turnCounter = countTurns();
    const acks = Array.from({ length: wrappers }, (_, w) => writer.write(session(`s${w}`), batch(`w${w}`, size)));
    expect(await Promise.all(acks)).toEqual(Array.from({ length: wrappers }, () => ({ acked: size })));
    const turns = turnCounter.stop();
    // 5,600 entries: never more than the bound in one commit, no batch split
    expect(commits.reduce((a, b) => a + b, 0)).toBe(size * wrappers);
    expect(Math.max(...commits)).toBeLessThanOrEqual(MAX_ENTRIES_PER_COMMIT);
    expect(commits.every((c) => c % size === 0)).toBe(true);
    expect(commits.length).toBeGreaterThanOrEqual(Math.ceil((size * wrappers) / MAX_ENTRIES_PER_COMMIT));
    expect(turns).toBeGreaterThanOrEqual(commits.length - 1);
    const ids = (store.db.prepare('SELECT id FROM journal ORDER BY seq').all() as { id: string }[]).map((r) => r.id);
    expect(ids).toEqual(Array.from({ length: wrappers }, (_, w) => batch(`w${w}`, size).map((r) => r.id)).flat());
  });

  test('one batch larger than the bound is written whole; the broker stopping writes everything queued at once', () => {
    const { writer, commits } = setup();
    void writer.write(session('a'), batch('a', MAX_ENTRIES_PER_COMMIT + 5));
    void writer.write(session('b'), batch('b', 10));
    void writer.write(session('c'), batch('c', MAX_ENTRIES_PER_COMMIT));
    writer.flush();
    expect(commits).toEqual([MAX_ENTRIES_PER_COMMIT + 5, 10, MAX_ENTRIES_PER_COMMIT]);
  });

  test('a commit that fails rejects the batches it held; the next ones are still written', async () => {
    const { writer, commits } = setup(0);
    const first = writer.write(session('a'), batch('a', MAX_ENTRIES_PER_COMMIT));
    const second = writer.write(session('b'), batch('b', 3));
    await expect(first).rejects.toMatchObject({ code: 'journal-failed' });
    await expect(second).resolves.toEqual({ acked: 3 });
    expect(commits).toEqual([-MAX_ENTRIES_PER_COMMIT, 3]);
  });
});
