/**
 * The wrapper's part in undo's file snapshots: a pre-forward stage that, for a call of a tool whose files the
 * broker snapshots (the policy's `fileTools`), asks the broker to record the prior state of the paths the call
 * names, and holds the call until it has (`call.prepare`). The broker reads and keeps the files, never the
 * wrapper. Any other call passes in the same tick, untouched.
 *
 * Fail closed: a broker that refuses (the state could not be read or stored), does not answer, or is not
 * connected denies the call, with the reason. The approval said the call would be undoable; running it without
 * its snapshot would quietly break that.
 */
import { isObject } from '../jsonrpc/messages.js';
import type { PolicySnapshot } from '../policy/decide.js';
import { LIMITS } from '../protocol/limits.js';
import type { PrepareAnswer, PrepareRequest } from '../protocol/undo-api.js';
import type { CallStage, Veto } from './stages.js';

/** What the stage needs of the broker link. */
export interface PrepareLink {
  readonly policy: PolicySnapshot | null;
  prepare(req: PrepareRequest): Promise<PrepareAnswer>;
  /** Send the journal's entries once this turn is over, the one of the call just answered among them. */
  journalSoon(): void;
}

const MAX_PATH_ARGS = 16;
/** Snapshotted calls waiting for their server's answer, at most (one never answered is let go past it). */
const MAX_RUNNING = 256;

/** The policy's `fileTools` as the wrapper takes it: tool -> path argument names; anything else is dropped. */
export function readFileTools(raw: unknown): Record<string, string[]> {
  // no prototype: a tool may be called "__proto__" or "constructor"
  const out = Object.create(null) as Record<string, string[]>;
  if (!isObject(raw)) return out;
  for (const [tool, args] of Object.entries(raw)) {
    if (!Array.isArray(args)) continue;
    const names = args.filter((a): a is string => typeof a === 'string').slice(0, MAX_PATH_ARGS);
    if (names.length) out[tool] = names;
  }
  return out;
}

/**
 * The stage: a file tool's call waits for its snapshot; every other call is not touched. The broker reads what a
 * snapshotted call left in its files once its journal entry arrives, sent at once; should that come after the next
 * call's prepare, each prepare also names the snapshotted calls answered since the last one, and the broker reads
 * their files first.
 */
export function snapshotStage(link: PrepareLink): CallStage {
  /** Snapshotted calls sent to the server and not answered yet. */
  const running = new Set<string>();
  /** Snapshotted calls answered since the last prepare, oldest first. */
  let answered: string[] = [];
  return {
    name: 'snapshot',
    beforeForward(call) {
      const tools = link.policy?.fileTools;
      if (!tools || !Object.hasOwn(tools, call.tool)) return;
      const pathArgs = tools[call.tool]!;
      const paths: Record<string, unknown> = {};
      // only the path arguments go: never the content a call writes
      for (const name of pathArgs) paths[name] = Object.hasOwn(call.args, name) ? call.args[name] : null;
      const finished = answered.splice(0, LIMITS.finishedPerPrepare);
      let answer: Promise<PrepareAnswer>;
      try {
        answer = link.prepare({ callId: call.callId, tool: call.tool, paths, ...(finished.length ? { finished } : {}) });
      } catch (err) {
        answer = Promise.reject(err as Error);
      }
      return answer.then(
        (a): Veto | undefined => {
          if (!a.ok) return { veto: a.reason ?? 'Airlock could not snapshot the files this call changes, so it was not run' };
          if (a.undoable) {
            running.add(call.callId);
            if (running.size > MAX_RUNNING) running.delete(running.values().next().value!);
          }
          return undefined;
        },
        (err: Error): Veto => {
          // not told: the next prepare names them, or the journal's entries do
          answered = [...finished, ...answered];
          return {
            veto: `Airlock could not record the state of the files this call changes before it ran (${err.message}), so it was not run`,
            decidedBy: 'error',
          };
        },
      );
    },
    afterResult(call) {
      if (!running.delete(call.callId)) return;
      answered.push(call.callId);
      if (answered.length > MAX_RUNNING) answered.shift();
      // its end goes to the broker now, which reads the state the call left its files in as the entry arrives: while
      // the client is busy with the answer, not on the path of the next call (whose prepare still names it, and
      // waits for that read)
      link.journalSoon();
    },
  };
}
