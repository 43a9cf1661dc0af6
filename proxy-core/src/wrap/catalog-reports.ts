/**
 * The wrapper's catalog reports to the broker, one at a time. The broker writes a big report's pins over
 * several turns of its event loop (broker/pins.ts), and it refuses a second report from a connection while one
 * is still being written: a connection that could queue reports without end could fill the broker's memory.
 * So the reports wait here, in the order the server listed them, and the next goes when the broker has
 * answered the last. None is merged into another: a definition the client was shown and the broker never
 * pinned would let a server change it unseen (pins.ts), except past `MAX_WAITING_REPORTS`, where the newest
 * takes the place of the one before it rather than let the wrapper's memory grow with a server's churn.
 */
import type { Channel } from '../ipc/channel.js';
import { WrapperMethod } from '../protocol/names.js';

export interface CatalogReport {
  verdicts: unknown[];
  problems: string[];
}

/** Reports waiting for the broker, the one being written included; past it the newest replaces the last waiting. */
export const MAX_WAITING_REPORTS = 16;

export class CatalogReports {
  /** The reports the broker has not yet answered, oldest first; the first is on its way when `sending`. */
  private readonly waiting: CatalogReport[] = [];
  private sending: Channel | null = null;
  /** The newest report: a broker connected anew gets it, since it may not know this wrapper's catalog. */
  private last: CatalogReport | null = null;

  constructor(
    /** The broker's connection while the link is up. */
    private readonly channel: () => Channel | null,
    private readonly log: (msg: string) => void,
  ) {}

  /** A catalog to tell the broker, after those still waiting. */
  add(report: CatalogReport): void {
    this.last = report;
    if (this.waiting.length >= MAX_WAITING_REPORTS) this.waiting[this.waiting.length - 1] = report;
    else this.waiting.push(report);
    this.next();
  }

  /** The link is up on a new connection: what waits goes now, or else the newest catalog again. */
  reconnected(): void {
    this.sending = null;
    if (this.waiting.length === 0 && this.last) this.waiting.push(this.last);
    this.next();
  }

  /** How many reports the broker has not answered yet (for tests and the bench). */
  get pending(): number {
    return this.waiting.length;
  }

  private next(): void {
    const channel = this.channel();
    if (this.sending || !channel || this.waiting.length === 0) return;
    const report = this.waiting[0]!;
    this.sending = channel;
    channel.request(WrapperMethod.catalogUpdate, report).then(
      () => this.answered(channel, report),
      (err: Error & { code?: string }) => {
        // a connection that closed takes the report to the next one; a refusal would be refused again
        if (err.code === 'closed' || !channel.isOpen) {
          if (this.sending === channel) this.sending = null;
          return;
        }
        this.log(`airlock: catalog update failed: ${err.message}`);
        this.answered(channel, report);
      },
    );
  }

  private answered(channel: Channel, report: CatalogReport): void {
    if (this.sending !== channel) return;
    this.sending = null;
    if (this.waiting[0] === report) this.waiting.shift();
    this.next();
  }
}
