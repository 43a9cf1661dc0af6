/**
 * Multi round-trip requests (2026-07-28): a server that needs input answers a tools/call with
 * `resultType: "input_required"` (what it asks for, and an opaque `requestState`); the client gathers the input and
 * sends the call again under a NEW id, with the same tool and arguments, echoing `requestState` and adding
 * `inputResponses`. For Airlock those requests are one call: it was decided once, on its content (server, tool,
 * the hash of its arguments: never the state or the responses, which are not arguments), so its retry is neither
 * asked again nor given another tripwire place, and the journal keeps one entry with a step per round.
 *
 * A retry takes a round only when its tool and argument hash are those of a call the server asked for input, and
 * its `requestState` is the very one the server gave (byte for byte: compared as the string it was). Anything else
 * (a round never seen, forgotten, or ended by E-Stop) is a new call and is decided as one.
 */
import type { Call, Round } from './call.js';
import { describeRequests, type InputRequired } from './era.js';

/** Rounds waited on at once (past it the oldest is forgotten: its retry is then decided afresh). */
const MAX_ROUNDS = 256;
/** How long a round waits for the client's retry (a person may take a while to answer an elicitation). */
const ROUND_KEEP_MS = 30 * 60_000;

export class Rounds {
  private readonly open = new Map<string, Round>();

  get size(): number {
    return this.open.size;
  }

  /** The server answered `call` asking for input: its retry is awaited. Returns the step for the journal. */
  opened(call: Call, asked: InputRequired, now: number): string {
    const before = call.round;
    const n = (before?.n ?? 0) + 1;
    const round: Round = { first: before?.first ?? call, last: call, decidedBy: call.decidedBy ?? 'error', requestState: asked.requestState, n, at: now };
    const key = keyOf(call.tool, call.argsSha256());
    this.open.delete(key);
    if (this.open.size >= MAX_ROUNDS) this.open.delete(this.open.keys().next().value!);
    this.open.set(key, round);
    return `; round ${n}: ${describeRequests(asked)}`;
  }

  /** The round a retry continues (taken: a round is continued once), or undefined when it continues none. */
  take(tool: string, sha: string, requestState: unknown, now: number): Round | undefined {
    const key = keyOf(tool, sha);
    const round = this.open.get(key);
    if (!round) return undefined;
    if (now - round.at > ROUND_KEEP_MS) {
      this.open.delete(key);
      return undefined;
    }
    // the state is the server's: what comes back must be what it gave (none given: none may come)
    if (requestState !== round.requestState && !(round.requestState === undefined && requestState === undefined)) return undefined;
    this.open.delete(key);
    return round;
  }

  /** Every round waited on, forgotten (E-Stop: their retries are new calls, refused while it is on). */
  endAll(): Round[] {
    const all = [...this.open.values()];
    this.open.clear();
    return all;
  }
}

function keyOf(tool: string, sha: string): string {
  return `${tool}\u0000${sha}`;
}
