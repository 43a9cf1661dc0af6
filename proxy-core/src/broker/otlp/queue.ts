/**
 * The audit export's queue on disk: what is mapped to OTLP waits in a table of the broker's database until the
 * collector took it, so a collector that is down (or a broker that restarts) loses nothing. It is bounded: past
 * `max` rows the newest are not kept, counted in `dropped` (shown in `airlock status`), and the exporter
 * records an event the first time the bound is hit after the queue had room.
 *
 * The table is the export's own and is made here (IF NOT EXISTS) rather than by a migration: nothing else reads
 * it, and a database without it (an older one, or one restored from a backup) only starts an empty queue.
 */
import type Database from 'better-sqlite3';
import type { OtlpItem } from './mapping.js';

/** Items a row holds at most: one INSERT per chunk, not per record, keeps the queue off the broker's time. */
const CHUNK = 500;

export interface QueuedBatch {
  /** The last row's seq: acknowledging it removes every row up to it. */
  seq: number;
  items: OtlpItem[];
}

export class OtlpQueue {
  private readonly s;
  private count: number;

  constructor(
    private readonly db: Database.Database,
    readonly max: number,
  ) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS otlp_batches (seq INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER NOT NULL, items TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS otlp_counts (id INTEGER PRIMARY KEY CHECK (id = 1), dropped INTEGER NOT NULL, sent INTEGER NOT NULL);
      INSERT OR IGNORE INTO otlp_counts (id, dropped, sent) VALUES (1, 0, 0);
    `);
    this.s = {
      insert: db.prepare('INSERT INTO otlp_batches (n, items) VALUES (?, ?)'),
      after: db.prepare('SELECT seq, n, items FROM otlp_batches WHERE seq > ? ORDER BY seq LIMIT 1'),
      remove: db.prepare('DELETE FROM otlp_batches WHERE seq <= ?'),
      removed: db.prepare('SELECT COALESCE(SUM(n), 0) AS n FROM otlp_batches WHERE seq <= ?'),
      total: db.prepare('SELECT COALESCE(SUM(n), 0) AS n FROM otlp_batches'),
      counts: db.prepare('SELECT dropped, sent FROM otlp_counts WHERE id = 1'),
      dropped: db.prepare('UPDATE otlp_counts SET dropped = dropped + ? WHERE id = 1'),
      sent: db.prepare('UPDATE otlp_counts SET sent = sent + ? WHERE id = 1'),
    };
    this.count = (this.s.total.get() as { n: number }).n;
  }

  /** Keep `items` in one transaction; returns how many did not fit under the bound (dropped, and counted). */
  push(items: readonly OtlpItem[]): number {
    if (items.length === 0) return 0;
    const room = Math.max(0, this.max - this.count);
    const kept = items.length <= room ? items : items.slice(0, room);
    const dropped = items.length - kept.length;
    this.db.transaction(() => {
      for (let i = 0; i < kept.length; i += CHUNK) {
        const chunk = kept.slice(i, i + CHUNK);
        this.s.insert.run(chunk.length, JSON.stringify(chunk));
      }
      if (dropped > 0) this.s.dropped.run(dropped);
    })();
    this.count += kept.length;
    return dropped;
  }

  /**
   * The oldest items, whole rows of them, about `limit` (at least one row); null when empty. A row that cannot
   * be read back is handed out as items to skip: it can never be sent, and must not block the ones after it.
   */
  peek(limit: number): QueuedBatch | null {
    const items: OtlpItem[] = [];
    let seq = 0;
    while (items.length < limit) {
      const row = this.s.after.get(seq) as { seq: number; n: number; items: string } | undefined;
      if (!row) break;
      seq = row.seq;
      try {
        items.push(...(JSON.parse(row.items) as OtlpItem[]));
      } catch {
        items.push({ s: 'skip' });
      }
    }
    return seq === 0 ? null : { seq, items };
  }

  /** The collector took every row up to `seq` (`count` records of them sent). */
  ack(seq: number, count: number): void {
    this.db.transaction(() => {
      const n = (this.s.removed.get(seq) as { n: number }).n;
      this.s.remove.run(seq);
      this.count -= n;
      this.s.sent.run(count);
    })();
  }

  /** Records waiting. */
  get size(): number {
    return this.count;
  }

  counts(): { dropped: number; sent: number } {
    return this.s.counts.get() as { dropped: number; sent: number };
  }
}
