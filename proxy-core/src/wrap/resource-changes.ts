/**
 * A resource changed while a read-only call was running: the claim of every read-only call in flight is
 * withdrawn (we cannot tell which one did it), for every later call, and the client is told to re-list.
 */
import { isObject } from '../jsonrpc/messages.js';
import type { CallView } from './call.js';

export interface ResourceChangeContext {
  /** Calls forwarded under a read-only class and not answered yet. */
  runningReadOnly(): CallView[];
  /** Read-only calls running as tasks. */
  runningTasks(): CallView[];
  /** The trusted read-only calls that ran without a tripwire place are counted as changing now. */
  countAsChanging(n: number): void;
  withdraw(suspects: Map<string, string>): void;
}

export function observeResourceChange(o: ResourceChangeContext, method: string, params: unknown): void {
  const uri = isObject(params) && typeof params.uri === 'string' ? ` (${params.uri.slice(0, 300)})` : '';
  const suspects = new Map<string, string>();
  const running = o.runningReadOnly();
  // one of them changed something: the tripwire counts the trusted ones (which ran without a place) as changing
  o.countAsChanging(running.filter((c) => c.verdict?.class === 'read-only-trusted').length);
  for (const c of [...running, ...o.runningTasks()]) {
    if (!suspects.has(c.tool)) {
      suspects.set(c.tool, `the server sent ${method}${uri} while "${c.tool}" was running (call ${c.callId}, ${new Date().toISOString()})`);
    }
  }
  if (suspects.size > 0) o.withdraw(suspects);
}
