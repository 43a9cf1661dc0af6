/**
 * The execution pass: invoke the tools the ExecutionPolicy permits with generated (or supplied) arguments, a few
 * times each, and check what comes back. What it refuses is listed with the reason, never called.
 */
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { classifyTools, isReadOnlyClass, stricter, type Verdict } from '../classify/classify.js';
import { fetchToolList, type ToolEntry } from './listing.js';
import type { Findings } from './findings.js';
import { generateArguments, requiredProperties } from './generate-args.js';
import { validateAgainstSchema, validateStructuredContent } from '../util/json-schema.js';
import type { ExecutionPolicy } from './execution-policy.js';
import type { ServerConnection, RpcOutcome } from './connection.js';
import { isObject } from './json.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ExecutedTool {
  tool: string;
  /** Median latency of the runs that got an answer; null when none did. */
  latencyMsP50: number | null;
  runs: number;
  arguments: Record<string, unknown>;
  checks: Check[];
}

export interface SkippedTool {
  tool: string;
  reason: string;
}

export interface ProbeOptions {
  policy: ExecutionPolicy;
  /** Operator-supplied arguments per tool, laid over the generated ones. */
  overrides: ReadonlyMap<string, Record<string, unknown>>;
  /** Calls per tool for the latency figure. */
  runs: number;
}

// A slow tool is measured once: three runs of a ten-second tool would make the check-up the slow part.
const SLOW_CALL_MS = 2000;


/** Median of a non-empty list. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const value = sorted.length % 2 === 1 ? sorted[mid] : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  return value === undefined ? null : Math.round(value * 10) / 10;
}

function errorText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const text = content.find((c): c is Record<string, unknown> => isObject(c) && typeof c.text === 'string');
  return text ? String(text.text).slice(0, 200) : '(no text)';
}

function callFailure(outcome: Extract<RpcOutcome, { ok: false }>, timeoutMs: number): string {
  if (outcome.timedOut) return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  if (outcome.closed) return 'the server exited during the call';
  return outcome.message;
}

async function call(connection: ServerConnection, tool: string, args: Record<string, unknown>): Promise<RpcOutcome> {
  connection.during = `tool:${tool}`;
  try {
    return await connection.request('tools/call', { name: tool, arguments: args });
  } finally {
    connection.during = undefined;
    connection.after = `tool:${tool}`;
  }
}

function checkResult(entry: ToolEntry, result: unknown, checks: Check[], findings: Findings): void {
  const name = entry.name;
  if (!isObject(result) || !Array.isArray(result.content)) {
    checks.push({ name: 'result', ok: false, detail: 'result has no "content" array (required by the spec)' });
    findings.add('error', 'tools/call result has no "content" array (required by the spec)', name);
    return;
  }
  if (result.isError === true) {
    checks.push({ name: 'result', ok: false, detail: `isError: ${errorText(result)}` });
    findings.add('info', `returned isError for the probe arguments (${errorText(result)}); real ones can be supplied with --arg ${name}.KEY=JSON`, name);
    return;
  }
  checks.push({ name: 'result', ok: true, detail: `${result.content.length} content item(s)` });
  const outputSchema = entry.raw.outputSchema;
  if (outputSchema !== undefined) {
    const check = validateStructuredContent(outputSchema, result.structuredContent);
    if (check.ok) {
      checks.push({ name: 'output-schema', ok: true, detail: 'structuredContent matches outputSchema' });
    } else {
      const detail = check.errors.join('; ');
      checks.push({ name: 'output-schema', ok: false, detail });
      findings.add('error', `structuredContent does not match outputSchema: ${detail}`, name);
    }
  } else if (result.structuredContent !== undefined) {
    findings.add('info', 'returns structuredContent without declaring an outputSchema', name);
  }
}

async function checkMissingRequired(
  connection: ServerConnection,
  entry: ToolEntry,
  args: Record<string, unknown>,
  checks: Check[],
  findings: Findings,
): Promise<void> {
  const missing = requiredProperties(entry.raw.inputSchema)[0];
  if (missing === undefined) {
    checks.push({ name: 'rejects-missing-required', ok: true, detail: 'no required arguments to omit' });
    return;
  }
  const { [missing]: _omitted, ...partial } = args;
  const outcome = await call(connection, entry.name, partial);
  if (outcome.ok) {
    if (isObject(outcome.result) && outcome.result.isError === true) {
      checks.push({ name: 'rejects-missing-required', ok: true, detail: `rejected with isError when "${missing}" is missing` });
      return;
    }
    checks.push({ name: 'rejects-missing-required', ok: false, detail: `accepted a call without required "${missing}"` });
    findings.add('warning', `accepted a call with required argument "${missing}" missing: the server does not validate its input`, entry.name);
    return;
  }
  if (outcome.code === ErrorCode.InvalidParams) {
    checks.push({ name: 'rejects-missing-required', ok: true, detail: `rejected with -32602 when "${missing}" is missing` });
  } else if (outcome.timedOut || outcome.closed) {
    const detail = callFailure(outcome, connection.timeoutMs);
    checks.push({ name: 'rejects-missing-required', ok: false, detail });
    findings.add('warning', `call without required "${missing}": ${detail}`, entry.name);
  } else {
    // Rejected, which is what matters; the code is not the one the spec names.
    checks.push({ name: 'rejects-missing-required', ok: true, detail: `rejected with error ${outcome.code ?? '?'} (expected -32602 or isError)` });
  }
}

/** How many times to call a tool for its latency: a change that is not declared idempotent is made once. */
function runsFor(verdict: Verdict, wanted: number): number {
  const idempotent = isObject(verdict.declared) && verdict.declared.idempotentHint === true;
  return isReadOnlyClass(verdict.class) || idempotent ? wanted : Math.min(wanted, 1);
}

async function execute(connection: ServerConnection, entry: ToolEntry, verdict: Verdict, options: ProbeOptions, findings: Findings): Promise<ExecutedTool> {
  const generated = generateArguments(entry.raw.inputSchema);
  const args = { ...generated.args, ...(options.overrides.get(entry.name) ?? {}) };
  const checks: Check[] = [];
  const inputCheck = isObject(entry.raw.inputSchema) ? validateAgainstSchema(entry.raw.inputSchema, args) : { ok: true as const };
  if (inputCheck.ok) {
    // what is noted here is a pattern the check could not run (generate-args.ts): said, so "satisfy" is not read as sure
    checks.push({ name: 'arguments', ok: true, detail: ['probe arguments satisfy inputSchema', ...generated.notes].join('; ') });
    if (generated.notes.length > 0) {
      findings.add('info', `probe arguments not fully checked (${generated.notes.join('; ')}); supply them with --arg ${entry.name}.KEY=JSON`, entry.name);
    }
  } else {
    const detail = [...generated.notes, ...inputCheck.errors].join('; ');
    checks.push({ name: 'arguments', ok: false, detail });
    findings.add('info', `could not build arguments that satisfy inputSchema (${detail}); supply them with --arg ${entry.name}.KEY=JSON`, entry.name);
  }

  const latencies: number[] = [];
  let first: RpcOutcome | undefined;
  for (let run = 0; run < runsFor(verdict, options.runs); run++) {
    const outcome = await call(connection, entry.name, args);
    first ??= outcome;
    if (!outcome.ok) break;
    latencies.push(outcome.ms);
    if (outcome.ms > SLOW_CALL_MS) break;
  }
  if (first === undefined || !first.ok) {
    const detail = first === undefined ? 'not called' : callFailure(first, connection.timeoutMs);
    checks.push({ name: 'call', ok: false, detail });
    if (first !== undefined && !first.ok) {
      findings.add(first.timedOut || first.closed ? 'error' : 'warning', `tools/call failed: ${detail}`, entry.name);
    }
  } else {
    checks.push({ name: 'call', ok: true, detail: `${latencies.length} run(s)` });
    checkResult(entry, first.result, checks, findings);
  }
  if (!connection.serverExited) await checkMissingRequired(connection, entry, args, checks, findings);
  return { tool: entry.name, latencyMsP50: median(latencies), runs: latencies.length, arguments: args, checks };
}

/**
 * The verdict to decide on now. After a tools/list_changed the list is fetched again and the stricter of the
 * two verdicts wins: a change can stop a tool from running, never start one.
 */
function currentVerdict(entry: ToolEntry, relisted: ReadonlyMap<string, Verdict> | undefined): Verdict | undefined {
  if (relisted === undefined) return entry.verdict;
  const now = relisted.get(entry.name);
  if (now === undefined) return undefined;
  return stricter(entry.verdict.class, now.class) === entry.verdict.class ? entry.verdict : now;
}

/** Run the permitted tools; every tool ends up in exactly one of executed and skipped. */
export async function probeTools(
  connection: ServerConnection,
  tools: readonly ToolEntry[],
  options: ProbeOptions,
  findings: Findings,
): Promise<{ executed: ExecutedTool[]; skipped: SkippedTool[] }> {
  const executed: ExecutedTool[] = [];
  const skipped: SkippedTool[] = [];
  let exitedDuring: string | undefined;
  let relisted: Map<string, Verdict> | undefined;
  let eventsSeen = 0;
  let permitted = 0;
  for (const entry of tools) {
    const fresh = connection.events.slice(eventsSeen);
    eventsSeen = connection.events.length;
    if (fresh.some((e) => e.method === 'notifications/tools/list_changed') && !connection.serverExited) {
      const list = await fetchToolList(connection);
      // A listing that fails now leaves nothing to trust: treat every remaining tool as gone.
      relisted = list === undefined ? new Map() : classifyTools(list, { trustReadOnlyHints: false }).verdicts;
    }
    const verdict = currentVerdict(entry, relisted);
    if (verdict === undefined) {
      skipped.push({ tool: entry.name, reason: 'no longer listed after the server sent notifications/tools/list_changed' });
      continue;
    }
    const decision = options.policy.decide(verdict);
    if (!decision.run) {
      skipped.push({ tool: entry.name, reason: decision.reason });
      continue;
    }
    permitted += 1;
    if (connection.serverExited) {
      skipped.push({ tool: entry.name, reason: 'the server exited before this tool could run' });
      continue;
    }
    executed.push(await execute(connection, entry, verdict, options, findings));
    if (connection.serverExited && exitedDuring === undefined) exitedDuring = entry.name;
  }
  connection.during = undefined;
  // Whatever arrives from here on is not "right after" the last tool.
  connection.after = undefined;
  if (exitedDuring !== undefined) {
    findings.add('error', `the server exited (${connection.exitDescription || 'unknown status'}) while this tool was being probed`, exitedDuring);
  }
  if (tools.length > 0 && permitted === 0) {
    findings.add(
      'warning',
      `0 of ${tools.length} tools executed: none permitted by policy. Add readOnlyHint: true to the tools that only read, ` +
        'or opt in with --allow-mutations / --allow-destructive (the latter for your own test tenant only)',
    );
  }
  return { executed, skipped };
}
