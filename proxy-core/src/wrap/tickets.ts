/**
 * The tickets this wrapper asked the broker for, and which call waits on each. A call still waiting when
 * its client would give up is answered early; its ticket stays open here, without a call ("held"), until
 * the same call (same tool, same arguments by hash) is made again and picks up the decision, or it expires.
 */
import type { AskAnswer } from '../protocol/api.js';
import type { Call } from './call.js';
import type { Clock, Timer } from '../util/clock.js';

export type TicketOutcome = { ok: true; answer: AskAnswer } | { ok: false; error: Error };

export interface WrapperTicket {
  /** The call id the broker knows the ticket by (that of the call that asked). */
  readonly askId: string;
  readonly tool: string;
  readonly argsSha256: string;
  /** The broker's ticket id, once it said. */
  ticketId: string | undefined;
  /** The call waiting on it; null while held (its call was answered early). */
  owner: Call | null;
  /** The broker's answer, once it came (kept for a held ticket until picked up or expired). */
  outcome: TicketOutcome | undefined;
  /** When the outcome came (the decision's time, for the call that picks it up). */
  settledAt: number | undefined;
  expiry: Timer | undefined;
}

export class TicketBook {
  private readonly byAsk = new Map<string, WrapperTicket>();

  constructor(private readonly clock: Clock) {}

  open(askId: string, tool: string, argsSha256: string, owner: Call): WrapperTicket {
    const t: WrapperTicket = { askId, tool, argsSha256, ticketId: undefined, owner, outcome: undefined, settledAt: undefined, expiry: undefined };
    this.byAsk.set(askId, t);
    return t;
  }

  get(askId: string): WrapperTicket | undefined {
    return this.byAsk.get(askId);
  }

  has(t: WrapperTicket): boolean {
    return this.byAsk.get(t.askId) === t;
  }

  /** The oldest held ticket for this same call (nobody waits on it), if any. */
  heldFor(tool: string, argsSha256: string): WrapperTicket | undefined {
    for (const t of this.byAsk.values()) if (t.owner === null && t.tool === tool && t.argsSha256 === argsSha256) return t;
    return undefined;
  }

  /** Held tickets: no call waits on them. */
  held(): WrapperTicket[] {
    return [...this.byAsk.values()].filter((t) => t.owner === null);
  }

  /** Forget it after `ms` unless it is removed (picked up) before; `expired` runs if it was not. */
  expireAfter(t: WrapperTicket, ms: number, expired: (t: WrapperTicket) => void): void {
    this.clock.clearTimeout(t.expiry);
    t.expiry = this.clock.setTimeout(() => {
      if (!this.has(t)) return;
      this.remove(t);
      expired(t);
    }, ms);
  }

  remove(t: WrapperTicket): void {
    this.clock.clearTimeout(t.expiry);
    t.expiry = undefined;
    if (this.has(t)) this.byAsk.delete(t.askId);
  }

  get size(): number {
    return this.byAsk.size;
  }
}
