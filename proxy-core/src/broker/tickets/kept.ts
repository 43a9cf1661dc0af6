/**
 * Tickets kept past their wrapper's session. A wrapper that answers a held call "still waiting" (before its
 * client would give up) promises the ticket stays open, and a one-shot client (a CLI that makes one call and
 * exits) ends the session right after. Such a ticket stays open for its own timeout, with nobody waiting on it;
 * a person's decision on it is kept until the same call (same client, server, tool and arguments by hash) is
 * made again from a new session, which takes it once, or until a ticket timeout after the decision.
 */
import type { AskAnswer, Ticket } from '../../protocol/api.js';
import type { Clock, Timer } from '../../util/clock.js';

/** What makes a later call "the same call" as a kept ticket's. */
export interface SameCall {
  client: string;
  server: string;
  tool: string;
  argsSha256: string;
}

export function sameCallOf(t: Ticket): SameCall {
  return { client: t.client, server: t.server, tool: t.tool, argsSha256: t.argsSha256 };
}

export function isSameCall(a: SameCall, b: SameCall): boolean {
  return a.client === b.client && a.server === b.server && a.tool === b.tool && a.argsSha256 === b.argsSha256;
}

interface Kept {
  call: SameCall;
  answer: AskAnswer;
  timer: Timer | undefined;
}

/** Decisions on kept tickets, each waiting for the same call made again. */
export class KeptDecisions {
  private readonly kept: Kept[] = [];

  constructor(private readonly clock: Clock) {}

  /** Only a person's decision is kept: a timeout, an E-Stop or a shutdown leaves nothing to pick up. */
  add(ticket: Ticket, answer: AskAnswer, keepMs: number): void {
    if (answer.decidedBy !== 'user') return;
    const k: Kept = { call: sameCallOf(ticket), answer, timer: undefined };
    // not picked up in time: the decision lapses (the ticket's end was recorded when it was made)
    k.timer = this.clock.setTimeout(() => this.drop(k), keepMs);
    this.kept.push(k);
  }

  /** The oldest decision for this same call, taken (an approval is used once). */
  take(call: SameCall): AskAnswer | undefined {
    const k = this.kept.find((x) => isSameCall(x.call, call));
    if (!k) return undefined;
    this.drop(k);
    this.clock.clearTimeout(k.timer);
    return k.answer;
  }

  get size(): number {
    return this.kept.length;
  }

  private drop(k: Kept): boolean {
    const i = this.kept.indexOf(k);
    if (i < 0) return false;
    this.kept.splice(i, 1);
    return true;
  }
}
