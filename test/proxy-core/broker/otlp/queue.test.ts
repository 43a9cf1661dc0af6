import { describe, expect, test } from 'vitest';
import { OtlpQueue } from '../../../../proxy-core/src/broker/otlp/queue.js';
import type { LogItem } from '../../../../proxy-core/src/broker/otlp/mapping.js';
import { tempStores } from '../../../helpers/temp-store.js';

const stores = tempStores('al-otlpq-');
const log = (n: number): LogItem => ({ s: 'log', time: n, eventName: 'airlock.test', severity: 9, severityText: 'INFO', body: `#${n}`, attributes: {} });

describe('the audit export queue', () => {
  test('keeps items in order across a reopen of the database, and removes only what was acknowledged', () => {
    const path = stores.dbPath();
    const a = stores.open(path);
    const q = new OtlpQueue(a.db, 100);
    expect(q.push([log(1), log(2), log(3)])).toBe(0);
    const head = q.peek(2);
    expect(head.map((h) => (h.item as LogItem).body)).toEqual(['#1', '#2']);
    q.ack(head[1]!.seq, 2);
    a.close();
    const b = stores.open(path);
    const again = new OtlpQueue(b.db, 100);
    expect(again.size).toBe(1);
    expect(again.peek(10).map((h) => (h.item as LogItem).body)).toEqual(['#3']);
    expect(again.counts()).toEqual({ dropped: 0, sent: 2 });
  });

  test('past its bound the newest are not kept and are counted as dropped', () => {
    const s = stores.open();
    const q = new OtlpQueue(s.db, 3);
    expect(q.push([log(1), log(2)])).toBe(0);
    expect(q.push([log(3), log(4), log(5)])).toBe(2);
    expect(q.size).toBe(3);
    expect(q.counts().dropped).toBe(2);
    q.ack(q.peek(1)[0]!.seq, 1);
    expect(q.push([log(6), log(7)])).toBe(1);
    expect(q.peek(10).map((h) => (h.item as LogItem).body)).toEqual(['#2', '#3', '#6']);
    expect(q.counts().dropped).toBe(3);
  });

  test('a row that cannot be read back is handed out as one to skip, not thrown', () => {
    const s = stores.open();
    const q = new OtlpQueue(s.db, 10);
    s.db.prepare('INSERT INTO otlp_queue (item) VALUES (?)').run('{not json');
    expect(q.peek(5)[0]!.item).toEqual({ s: 'skip' });
  });
});
