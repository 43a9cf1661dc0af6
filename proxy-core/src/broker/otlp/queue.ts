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

export interface QueuedItem {
  seq: number;
  item: OtlpItem;
}

export class OtlpQueue {
  private readonly s;
  private rows: number;

  constructor(
    private readonly db: Database.Database,
    readonly max: number,
  ) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS otlp_queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, item TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS otlp_counts (id INTEGER PRIMARY KEY CHECK (id = 1), dropped INTEGER NOT NULL, sent INTEGER NOT NULL);
      INSERT OR IGNORE INTO otlp_counts (id, dropped, sent) VALUES (1, 0, 0);
    `);
    this.s = {
      insert: db.prepare('INSERT INTO otlp_queue (item) VALUES (?)'),
      head: db.prepare('SELECT seq, item FROM otlp_queue ORDER BY seq LIMIT ?'),
      remove: db.prepare('DELETE FROM otlp_queue WHERE seq <= ?'),
      count: db.prepare('SELECT COUNT(*) AS n FROM otlp_queue'),
      counts: db.prepare('SELECT dropped, sent FROM otlp_counts WHERE id = 1'),
      dropped: db.prepare('UPDATE otlp_counts SET dropped = dropped + ? WHERE id = 1'),
      sent: db.prepare('UPDATE otlp_counts SET sent = sent + ? WHERE id = 1'),
    };
    this.rows = (this.s.count.get() as { n: number }).n;
  }

  /** Keep `items` in one transaction; returns how many did not fit under the bound (dropped, and counted). */
  push(items: readonly OtlpItem[]): number {
    if (items.length === 0) return 0;
    const room = Math.max(0, this.max - this.rows);
    const kept = items.length <= room ? items : items.slice(0, room);
    const dropped = items.length - kept.length;
    this.db.transaction(() => {
      for (const item of kept) this.s.insert.run(JSON.stringify(item));
      if (dropped > 0) this.s.dropped.run(dropped);
    })();
    this.rows += kept.length;
    return dropped;
  }

  /** The oldest `limit` items, in order (an unreadable row is skipped: it can never be sent). */
  peek(limit: number): QueuedItem[] {
    const out: QueuedItem[] = [];
    for (const row of this.s.head.all(limit) as { seq: number; item: string }[]) {
      try {
        out.push({ seq: row.seq, item: JSON.parse(row.item) as OtlpItem });
      } catch {
        out.push({ seq: row.seq, item: { s: 'skip' } });
      }
    }
    return out;
  }

  /** The collector took everything up to `seq`. */
  ack(seq: number, count: number): void {
    this.db.transaction(() => {
      const removed = this.s.remove.run(seq).changes;
      this.rows -= removed;
      this.s.sent.run(count);
    })();
  }

  get size(): number {
    return this.rows;
  }

  counts(): { dropped: number; sent: number } {
    return this.s.counts.get() as { dropped: number; sent: number };
  }
}
