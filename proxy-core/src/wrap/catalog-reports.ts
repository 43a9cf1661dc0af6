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
 * What the broker reads against the catalog goes after the reports that wait here (`afterReports`): a result's
 * structuredContent, checked against the output schema the report told it, and an ask, whose ticket shows the
 * person the listing the call was decided on. Sent at once, either would overtake them and be read against an
 * older catalog, or none. An ask that cannot wait (past the bound, or its connection lost before its report
 * went) is refused, and its call with it: never sent ahead of its report.
 */
import { type Channel, IpcError } from '../ipc/channel.js';
import { LIMITS } from '../protocol/limits.js';
import { WrapperMethod } from '../protocol/names.js';

export interface CatalogReport {
  verdicts: unknown[];
  problems: string[];
}

/** Reports waiting to be sent, at most; past it the newest replaces the last one waiting. */
export const MAX_WAITING_REPORTS = 16;
/**
 * Notes waiting behind reports, at most; past it a note is refused, or dropped when it cannot be (said so, once
 * while the wait lasts).
 */
export const MAX_NOTES_BEHIND = 64;

/** Something to write on the connection its report went on. */
export interface Note {
  send(channel: Channel): void;
  /**
   * It will not be sent: past the bound, or the connection lost while it waited (the caller fails closed). A
   * note without it is dropped.
   */
  refuse?(err: IpcError): void;
}

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
  /** Asks not sent yet, by call id, with what refuses them: their call may end first (`withdraw`). */
  private readonly asks = new Map<string, (err: IpcError) => void>();

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
    const channel = this.channel();
    // one that would otherwise wait for a connection no one knows will come is refused now
    if (!channel && note.refuse) return note.refuse(lostError());
    const newest = this.waiting[this.waiting.length - 1];
    if (newest === undefined) {
      if (channel) note.send(channel);
      return;
    }
    if (this.notesBehind >= MAX_NOTES_BEHIND) {
      if (!this.dropping) this.log(`airlock: more than ${MAX_NOTES_BEHIND} results and asks wait for catalog reports the broker has not taken yet; the checks of their structuredContent are skipped and the calls that ask are refused until it catches up`);
      this.dropping = true;
      note.refuse?.(new IpcError('busy', `more than ${MAX_NOTES_BEHIND} results and asks already wait for this server's catalog to reach Airlock`));
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

  /**
   * Ask the broker (`send` on the connection) once every report waiting now has gone, as `afterReports`; refused
   * rather than sent ahead of them.
   */
  ask<T>(callId: string, send: (channel: Channel) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.asks.set(callId, reject);
      // one no longer waiting here (withdrawn, or refused) is not sent
      this.afterReports({
        send: (channel) => {
          if (this.asks.delete(callId)) send(channel).then(resolve, reject);
        },
        refuse: (err) => {
          if (this.asks.delete(callId)) reject(err);
        },
      });
    });
  }

  /**
   * The call of an ask not sent yet ended: it never will be (the broker would open a ticket for a call that is
   * gone). False when no ask of that call waits here.
   */
  withdraw(callId: string): boolean {
    const refuse = this.asks.get(callId);
    if (!refuse) return false;
    this.asks.delete(callId);
    refuse(new IpcError('cancelled', 'the call ended before Airlock was asked'));
    return true;
  }

  /**
   * The connection is lost: notes that can be refused are, now (an ask waits on no connection); the others
   * stay behind their reports, which go again on the next connection.
   */
  lost(): void {
    for (const [report, notes] of this.behind) {
      const kept = notes.filter((note) => !note.refuse);
      for (const note of notes) if (note.refuse) note.refuse(lostError());
      this.notesBehind -= notes.length - kept.length;
      if (kept.length > 0) this.behind.set(report, kept);
      else this.behind.delete(report);
    }
    if (this.notesBehind === 0) this.dropping = false;
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
        for (const note of notes) note.send(channel);
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

const lostError = (): IpcError => new IpcError('closed', 'the connection to Airlock was lost before the catalog reached it');
