/**
 * Hooks on a call's way through the pipeline, registered as an ordered list of small stages (like
 * mitmproxy's addons): one runs before an allowed call is sent to the server (to snapshot what it may
 * change, or to veto it), one after the server's answer reached the client (to capture what it did).
 *
 * Fail closed: a pre-forward hook that throws or rejects denies the call, exactly like a veto; it is never a
 * forwarded call by accident. A post-result hook cannot take anything back: its failure is logged and
 * written into the call's journal entry. Hooks that return synchronously cost no extra tick, so an allowed
 * call is still forwarded in the tick it was read when no hook waits.
 */
import type { Message } from '../jsonrpc/messages.js';
import type { DecidedBy } from '../policy/decide.js';
import type { Outcome } from '../protocol/api.js';
import type { CallView } from './call.js';

/** A pre-forward hook's refusal: the call is denied with this reason (decided by `error` unless said). */
export interface Veto {
  veto: string;
  decidedBy?: DecidedBy;
}

/** The server's answer, as a post-result hook sees it. */
export interface ResponseView {
  /** The parsed response (result or error). */
  readonly message: Readonly<Message>;
  /** The bytes the server sent (what the client got). */
  readonly raw: Buffer;
  readonly outcome: Outcome;
}

export interface CallStage {
  /** Shown in logs and in the journal when the stage fails. */
  readonly name: string;
  /** Before an allowed call is sent: may be async; a Veto, a throw or a rejection denies the call. */
  beforeForward?(call: CallView): void | Veto | Promise<void | Veto>;
  /** After the server's answer reached the client: may be async; a failure is logged and journaled. */
  afterResult?(call: CallView, response: ResponseView): void | Promise<void>;
}

export type PreForwardResult = { ok: true; waited: boolean } | { ok: false; decidedBy: DecidedBy; reason: string };

const PASSED: PreForwardResult = Object.freeze({ ok: true, waited: false });
const PASSED_AFTER_WAIT: PreForwardResult = Object.freeze({ ok: true, waited: true });

/**
 * The pre-forward hooks as one function, composed as Hono's `compose` does: `dispatch(i)` runs hook i and goes
 * on to i + 1 once it returned (at once when it returned synchronously, so a call no hook waits on is forwarded
 * in the tick it was allowed, and costs no closure). Errors are handled in one place: a throw, a rejection or a
 * veto settles the call as refused. `settle` is called once with the result, unless the call left `preparing`
 * meanwhile (then nothing more runs).
 */
export function composeBeforeForward<C extends CallView>(stages: readonly CallStage[]): (call: C, settle: (call: C, r: PreForwardResult) => void) => void {
  const hooks = stages.filter((s) => s.beforeForward !== undefined);
  const dispatch = (call: C, settle: (call: C, r: PreForwardResult) => void, from: number, waited: boolean): void => {
    for (let i = from; i < hooks.length; i++) {
      if (call.state !== 'preparing') return;
      const stage = hooks[i]!;
      let out: ReturnType<NonNullable<CallStage['beforeForward']>>;
      try {
        out = stage.beforeForward!(call);
      } catch (err) {
        return settle(call, failed(stage, err));
      }
      if (isPromise(out)) {
        const next = i + 1;
        out.then(
          (value) => {
            if (call.state !== 'preparing') return;
            const veto = vetoOf(stage, value);
            if (veto) settle(call, veto);
            else dispatch(call, settle, next, true);
          },
          (err: unknown) => {
            if (call.state === 'preparing') settle(call, failed(stage, err));
          },
        );
        return;
      }
      if (out !== undefined) {
        const veto = vetoOf(stage, out);
        if (veto) return settle(call, veto);
      }
    }
    if (call.state === 'preparing') settle(call, waited ? PASSED_AFTER_WAIT : PASSED);
  };
  return (call, settle) => dispatch(call, settle, 0, false);
}

/**
 * The post-result hooks as one function (composed as above): `done` gets what failed (empty when nothing did),
 * synchronously when every hook returned so. A failure here cannot take anything back: it is reported, and the
 * next hook runs. Every forwarded call passes here: one whose hooks all return at once costs no closure.
 */
export function composeAfterResult(stages: readonly CallStage[]): ((call: CallView, response: ResponseView, done: (problems: readonly string[]) => void) => void) | undefined {
  const hooks = stages.filter((s) => s.afterResult !== undefined);
  if (hooks.length === 0) return undefined;
  return (call, response, done) => afterFrom(hooks, call, response, done, 0, undefined);
}

const NO_PROBLEMS: readonly string[] = Object.freeze([]);

/** The post-result hooks from `from` on; `problems`: what failed so far (made when the first one fails). */
function afterFrom(
  hooks: readonly CallStage[],
  call: CallView,
  response: ResponseView,
  done: (problems: readonly string[]) => void,
  from: number,
  problems: string[] | undefined,
): void {
  for (let i = from; i < hooks.length; i++) {
    const stage = hooks[i]!;
    let out: void | Promise<void>;
    try {
      out = stage.afterResult!(call, response);
    } catch (err) {
      (problems ??= []).push(afterFailure(stage, err));
      continue;
    }
    if (isPromise(out)) {
      const seen = problems ?? [];
      out.then(
        () => afterFrom(hooks, call, response, done, i + 1, seen),
        (err: unknown) => {
          seen.push(afterFailure(stage, err));
          afterFrom(hooks, call, response, done, i + 1, seen);
        },
      );
      return;
    }
  }
  done(problems ?? NO_PROBLEMS);
}

const afterFailure = (stage: CallStage, err: unknown): string => `the ${stage.name} stage failed after the result: ${messageOf(err)}`;

function vetoOf(stage: CallStage, value: unknown): PreForwardResult | null {
  if (typeof value !== 'object' || value === null || !('veto' in value)) return null;
  const v = value as Veto;
  const reason = typeof v.veto === 'string' && v.veto !== '' ? v.veto : `refused by the ${stage.name} stage`;
  return { ok: false, decidedBy: v.decidedBy ?? 'error', reason };
}

function failed(stage: CallStage, err: unknown): PreForwardResult {
  return { ok: false, decidedBy: 'error', reason: `the ${stage.name} stage failed before the call was sent: ${messageOf(err)}` };
}

function isPromise<T>(v: unknown): v is Promise<T> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
