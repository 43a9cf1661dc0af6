/**
 * Presence leases: a proof holds for the front end that gave it (its connection, its UI session) for a short
 * time, like sudo's timestamp, so a person approving several calls in a row touches once. A lease is never
 * lent to another front end, ends with its connection or session, and every lease ends at once when the screen
 * locks or the person says so (`presence.end`).
 */
import type { ProofKind } from '../../protocol/presence.js';
import type { Clock } from '../../util/clock.js';

export interface Lease {
  readonly kind: ProofKind;
  readonly label?: string;
  readonly since: number;
  readonly until: number;
}

export class Leases {
  private readonly held = new Map<string, Lease>();

  constructor(private readonly clock: Pick<Clock, 'now'>) {}

  grant(frontEnd: string, kind: ProofKind, seconds: number, label?: string): void {
    if (seconds <= 0) return;
    const now = this.clock.now();
    this.held.set(frontEnd, { kind, ...(label ? { label } : {}), since: now, until: now + seconds * 1000 });
  }

  /** The front end's lease while it holds; a lease cut short by a shorter setting ends at the new length. */
  get(frontEnd: string, maxSeconds: number): Lease | null {
    const lease = this.held.get(frontEnd);
    if (!lease) return null;
    const now = this.clock.now();
    if (now >= lease.until || now >= lease.since + maxSeconds * 1000) {
      this.held.delete(frontEnd);
      return null;
    }
    return lease;
  }

  end(frontEnd: string): void {
    this.held.delete(frontEnd);
  }

  endAll(): number {
    const n = this.held.size;
    this.held.clear();
    return n;
  }
}
