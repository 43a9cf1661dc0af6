/**
 * Challenges for loosening calls: each names one call exactly (its method and checked params: the binding) and
 * what it allows in words (the statement), is good once, for the front end that asked for it, for two minutes.
 * A proof answers the challenge's 32 bytes, so a touch given for one call can never be spent on another.
 */
import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson } from '../../util/canonical-json.js';
import type { Clock } from '../../util/clock.js';

export const CHALLENGE_MS = 2 * 60_000;
/**
 * Open challenges per front end: a person answers one at a time, so an agent asking for them in a loop pushes
 * out only its own oldest, never the one a person's front end is waiting on a touch for.
 */
const MAX_PER_FRONT_END = 8;
/** Challenges kept at once (each a few hundred bytes): reached only by thousands of front ends asking at once. */
const MAX_OPEN = 4096;

export interface OpenChallenge {
  readonly id: string;
  /** The front end that asked: only it may answer. */
  readonly frontEnd: string;
  readonly binding: string;
  readonly statement: string;
  /** What a proof signs. */
  readonly bytes: Buffer;
  readonly expiresAt: number;
}

/** The call a challenge is bound to: its method and its checked params, canonical. */
export function bindingOf(method: string, params: unknown): string {
  return createHash('sha256').update(method).update('\n').update(canonicalJson(params ?? {})).digest('hex');
}

export class Challenges {
  private readonly open = new Map<string, OpenChallenge>();

  constructor(private readonly clock: Pick<Clock, 'now'>) {}

  issue(frontEnd: string, binding: string, statement: string): OpenChallenge {
    this.sweep();
    const own = [...this.open.values()].filter((c) => c.frontEnd === frontEnd);
    for (const c of own.slice(0, Math.max(0, own.length - MAX_PER_FRONT_END + 1))) this.open.delete(c.id);
    while (this.open.size >= MAX_OPEN) this.open.delete(this.open.keys().next().value!);
    const id = `c${randomBytes(12).toString('hex')}`;
    const bytes = createHash('sha256').update(randomBytes(32)).update(binding).update(statement).digest();
    const c: OpenChallenge = { id, frontEnd, binding, statement, bytes, expiresAt: this.clock.now() + CHALLENGE_MS };
    this.open.set(id, c);
    return c;
  }

  /**
   * Spend a challenge for a call with this binding from this front end: the challenge, or why not. It is spent
   * whatever the answer (a wrong guess leaves nothing to try again with).
   */
  take(id: string, frontEnd: string, binding: string): OpenChallenge | string {
    const c = this.open.get(id);
    if (!c) return 'the presence challenge is unknown or was used already: ask for a new one';
    this.open.delete(id);
    if (c.expiresAt <= this.clock.now()) return 'the presence challenge expired: ask for a new one';
    if (c.frontEnd !== frontEnd) return 'the presence challenge was issued to another front end';
    if (c.binding !== binding) return 'the presence proof was given for another action than this one';
    return c;
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [id, c] of this.open) if (c.expiresAt <= now) this.open.delete(id);
  }
}
