/**
 * The wrapper's catalog reports to the broker, a few at a time. The broker writes a big report's pins over
 * several turns of its event loop (broker/pins.ts), and refuses a connection's report past
 * LIMITS.catalogReportsInFlight still being written: a connection that could queue reports without end could
 * fill the broker's memory. So a report goes at once while fewer are unanswered, as a call's ticket expects
 * (the broker reads what was listed from the report before the ask that follows it), and waits here otherwise,
 * in the order the server listed them. None is merged into another: a definition the client was shown and the
 * broker never pinned would let a server change it unseen (pins.ts), except past `MAX_WAITING_REPORTS`, where
 * the newest takes the place of the last one waiting rather than let the wrapper's memory grow with a server's
 * churn.
 *
 * A note the broker reads against the catalog (a result's structuredContent, checked against the output schema
 * the report told it) goes after the reports that wait here (`afterReports`): sent at once, it would overtake
 * them and be checked against an older catalog, or none.
 */
import type { Channel } from '../ipc/channel.js';
import { LIMITS } from '../protocol/limits.js';
import { WrapperMethod } from '../protocol/names.js';

export interface CatalogReport {
  verdicts: unknown[];
  problems: string[];
}

/** Reports waiting to be sent, at most; past it the newest replaces the last one waiting. */
export const MAX_WAITING_REPORTS = 16;
/** Notes waiting behind reports, at most; past it a note is dropped (and said so, once while the wait lasts). */
export const MAX_NOTES_BEHIND = 64;

/** A note to write on the connection its report went on. */
type Note = (channel: Channel) => void;

export class CatalogReports {
  /** Reports not sent yet, oldest first. */
  private readonly waiting: CatalogReport[] = [];
  /** Reports sent on the current connection and not answered yet. */
  private readonly sent = new Set<CatalogReport>();
  private connection: Channel | null = null;
  /** The newest report: a broker connected anew gets it, since it may not know this wrapper's catalog. */
  private last: CatalogReport | null = null;
  /** Notes to send right after a waiting report, by report. */
  private readonly behind = new Map<CatalogReport, Note[]>();
  private notesBehind = 0;
  private dropping = false;

  constructor(
    /** The broker's connection while the link is up. */
    private readonly channel: () => Channel | null,
    private readonly log: (msg: string) => void,
  ) {}

  /** A catalog to tell the broker, after those still waiting. */
  add(report: CatalogReport): void {
    this.last = report;
    if (this.waiting.length >= MAX_WAITING_REPORTS) {
      const replaced = this.waiting[this.waiting.length - 1]!;
      this.waiting[this.waiting.length - 1] = report;
      // what waited behind the report replaced goes behind the one that takes its place
      const notes = this.behind.get(replaced);
      if (notes) {
        this.behind.delete(replaced);
        this.behind.set(report, notes);
      }
    } else this.waiting.push(report);
    this.next();
  }

  /**
   * Send `note` once every report waiting now has gone: at once when none waits (the broker reads frames in
   * order, so one sent after a report is read after it), else right after the newest of them is sent.
   */
  afterReports(note: Note): void {
    const newest = this.waiting[this.waiting.length - 1];
    if (newest === undefined) {
      const channel = this.channel();
      if (channel) note(channel);
      return;
    }
    if (this.notesBehind >= MAX_NOTES_BEHIND) {
      if (!this.dropping) this.log(`airlock: more than ${MAX_NOTES_BEHIND} results wait for catalog reports the broker has not taken yet; the checks of their structuredContent are skipped`);
      this.dropping = true;
      return;
    }
    const notes = this.behind.get(newest);
    if (notes) notes.push(note);
    else this.behind.set(newest, [note]);
    this.notesBehind++;
  }

  /**
   * The link is up on a new connection: what was sent and not answered goes again, first, then what waits; with
   * nothing of either, the newest catalog again.
   */
  reconnected(): void {
    this.waiting.unshift(...this.sent);
    this.sent.clear();
    this.connection = null;
    if (this.waiting.length === 0 && this.last) this.waiting.push(this.last);
    this.next();
  }

  /** Reports not answered yet, sent or not (for tests). */
  get pending(): number {
    return this.waiting.length + this.sent.size;
  }

  private next(): void {
    const channel = this.channel();
    if (!channel) return;
    if (this.connection !== channel) {
      // a connection not seen yet (reconnected() not called): what was sent on the old one goes again
      if (this.connection !== null) this.waiting.unshift(...this.sent);
      this.sent.clear();
      this.connection = channel;
    }
    while (this.sent.size < LIMITS.catalogReportsInFlight && this.waiting.length > 0) {
      const report = this.waiting.shift()!;
      this.sent.add(report);
      const sending = channel.request(WrapperMethod.catalogUpdate, report);
      const notes = this.behind.get(report);
      if (notes) {
        this.behind.delete(report);
        this.notesBehind -= notes.length;
        if (this.notesBehind === 0) this.dropping = false;
        for (const note of notes) note(channel);
      }
      sending.then(
        () => this.answered(channel, report),
        (err: Error & { code?: string }) => {
          // a connection that closed keeps the report for the next one (reconnected); a refusal would only be
          // refused again
          if (err.code === 'closed' || !channel.isOpen) return;
          this.log(`airlock: catalog update failed: ${err.message}`);
          this.answered(channel, report);
        },
      );
    }
  }

  private answered(channel: Channel, report: CatalogReport): void {
    if (this.connection !== channel || !this.sent.delete(report)) return;
    this.next();
  }
}
