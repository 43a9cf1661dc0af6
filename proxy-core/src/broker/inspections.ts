/**
 * Check-ups the broker runs for a front end (`inspect`): the same as `airlock inspect --client C --server S`
 * (inspect/configured-server.ts), read-only, with the broker's environment. Each spawns the server and awaits
 * it, so the broker keeps serving; a few may run at once, and stopping the broker stops them.
 */
import { IpcError } from '../ipc/channel.js';
import type { Env } from '../ipc/paths.js';
import type { CheckedParamsOf, InspectReportResult } from '../protocol/api.js';
import { bad } from './validate.js';

/** Servers a front end may have started for check-ups at once: each is a process tree. */
export const MAX_INSPECTIONS = 4;

export class Inspections {
  private readonly running = new Set<AbortController>();

  constructor(private readonly env: Env) {}

  async run(p: CheckedParamsOf<'inspect'>): Promise<InspectReportResult> {
    if (this.running.size >= MAX_INSPECTIONS) throw new IpcError('busy', `${MAX_INSPECTIONS} check-ups are already running; try again when one ends`);
    const controller = new AbortController();
    // counted before the code loads (below), so that check-ups asked for meanwhile meet the bound too
    this.running.add(controller);
    let inspect: typeof import('../inspect/configured-server.js') | undefined;
    try {
      // loaded at the first check-up, not at the broker's start: with the MCP SDK's client and the JSON Schema
      // validator it brings, it was a third of what the broker loaded before it could listen
      inspect = await import('../inspect/configured-server.js');
      // the broker began to stop while it loaded
      controller.signal.throwIfAborted();
      const report = await inspect.inspectConfiguredServer({ client: p.client, server: p.server, env: this.env, timeoutMs: p.timeoutSeconds * 1000, signal: controller.signal });
      return { ...report, summary: { ...report.summary, toolsByClass: { ...report.summary.toolsByClass } as Record<string, number> } };
    } catch (err) {
      if (inspect && err instanceof inspect.ConfiguredServerError) throw bad(err.message);
      if (controller.signal.aborted) throw new IpcError('bad-state', 'the broker is stopping: the check-up was stopped');
      throw new IpcError('inspect-failed', `the check-up of ${p.server} could not run: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.running.delete(controller);
    }
  }

  /** Stop every check-up (the broker is going away): their servers' trees are stopped. */
  stopAll(): void {
    for (const c of this.running) c.abort(new Error('the broker is stopping'));
  }
}
