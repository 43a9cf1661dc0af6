import { describe, expect, test } from 'vitest';
import { OtlpQueue } from '../../../../proxy-core/src/broker/otlp/queue.js';
import type { LogItem } from '../../../../proxy-core/src/broker/otlp/mapping.js';
import { tempStores } from '../../../helpers/temp-store.js';

const stores = tempStores('al-otlpq-');
const bodies = (items: unknown[]) => items.map((i) => (i as LogItem).body);
const log = (n: number): LogItem => ({ s: 'log', time: n, eventName: 'airlock.test', severity: 9, severityText: 'INFO', body: `#${n}`, attributes: {} });

describe('the audit export queue', () => {
  test('keeps items in order across a reopen of the database, and removes only what was acknowledged', () => {
    const path = stores.dbPath();
    const a = stores.open(path);
    const q = new OtlpQueue(a.db, 100);
    expect(q.push([log(1), log(2), log(3)])).toBe(0);
    expect(q.push([log(4)])).toBe(0);
    // whole rows: the first push's three, then the second's one
    const head = q.peek(2)!;
    expect(bodies(head.items)).toEqual(['#1', '#2', '#3']);
    q.ack(head.seq, 3);
    a.close();
    const b = stores.open(path);
    const again = new OtlpQueue(b.db, 100);
    expect(again.size).toBe(1);
    expect(bodies(again.peek(10)!.items)).toEqual(['#4']);
    expect(again.counts()).toEqual({ dropped: 0, sent: 3 });
    again.ack(again.peek(10)!.seq, 1);
    expect(again.peek(10)).toBeNull();
    expect(again.size).toBe(0);
  });

  test('past its bound the newest are not kept and are counted as dropped', () => {
    const s = stores.open();
    const q = new OtlpQueue(s.db, 3);
    expect(q.push([log(1), log(2)])).toBe(0);
    expect(q.push([log(3), log(4), log(5)])).toBe(2);
    expect(q.size).toBe(3);
    expect(q.counts().dropped).toBe(2);
    q.ack(q.peek(1)!.seq, 2);
    expect(q.size).toBe(1);
    expect(q.push([log(6), log(7), log(8)])).toBe(1);
    expect(bodies(q.peek(10)!.items)).toEqual(['#3', '#6', '#7']);
    expect(q.counts().dropped).toBe(3);
    // a batch bigger than a row is split over rows, in order
    const big = new OtlpQueue(stores.open().db, 5000);
    big.push(Array.from({ length: 1200 }, (_, i) => log(i)));
    const all = big.peek(5000)!;
    expect(all.items).toHaveLength(1200);
    expect((all.items[1199] as LogItem).body).toBe('#1199');
  });

  test('a row that cannot be read back is handed out as one to skip, not thrown', () => {
    const s = stores.open();
    const q = new OtlpQueue(s.db, 10);
    s.db.prepare('INSERT INTO otlp_batches (n, items) VALUES (1, ?)').run('{not json');
    q.push([log(1)]);
    expect(q.peek(5)!.items).toEqual([{ s: 'skip' }, log(1)]);
  });
});
