/**
 * The listing pass: what the server says it offers (tools, resources, prompts, every page), what Airlock
 * makes of each tool, and what is wrong with the listing. Resources are read and prompts rendered without a
 * policy check: the spec defines both as non-mutating.
 */
import { classifyTools, HINT_NAMES, type Verdict } from '../classify/classify.js';
import { Findings } from './findings.js';
import { generateValue } from './generate-args.js';
import { schemaValidator } from '../util/json-schema.js';
import { scanJson, type PoisonHit } from './poisoning.js';
import type { ServerConnection } from './connection.js';
import { isObject } from './json.js';

export interface ToolEntry {
  name: string;
  /** The entry exactly as listed. */
  raw: Record<string, unknown>;
  verdict: Verdict;
}

export interface ResourceReport {
  uri: string;
  name?: string;
  mimeType?: string;
  ok: boolean;
  bytes?: number;
  error?: string;
}

export interface PromptReport {
  name: string;
  ok: boolean;
  arguments: Record<string, string>;
  messages?: number;
  error?: string;
}

export interface ListingLimits {
  maxPages: number;
  maxResources: number;
  maxPrompts: number;
  maxResourceBytes: number;
}

export const DEFAULT_LIMITS: ListingLimits = { maxPages: 50, maxResources: 20, maxPrompts: 20, maxResourceBytes: 1_000_000 };

// The spec's tool-name rule (2025-11-25): 1–128 characters from this set.
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;


/** Fetch every page of a list method; problems with the listing become findings. */
async function listAll(connection: ServerConnection, method: string, key: string, findings: Findings, limits: ListingLimits): Promise<unknown[] | undefined> {
  const items: unknown[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < limits.maxPages; page++) {
    const outcome = await connection.request(method, cursor === undefined ? undefined : { cursor });
    if (!outcome.ok) {
      findings.add(outcome.timedOut ? 'error' : 'warning', `${method} failed${page > 0 ? ` on page ${page + 1}` : ''}: ${outcome.message}`);
      return page === 0 ? undefined : items;
    }
    const result = outcome.result;
    if (!isObject(result) || !Array.isArray(result[key])) {
      findings.add('error', `${method} result has no "${key}" array`);
      return page === 0 ? undefined : items;
    }
    items.push(...(result[key] as unknown[]));
    const next = result.nextCursor;
    if (next === undefined || next === null) return items;
    if (typeof next !== 'string') {
      findings.add('error', `${method} nextCursor is ${typeof next}, not a string`);
      return items;
    }
    if (seen.has(next)) {
      findings.add('error', `${method} repeats cursor "${next.slice(0, 40)}": pagination loops`);
      return items;
    }
    seen.add(next);
    cursor = next;
  }
  findings.add('warning', `${method} has more than ${limits.maxPages} pages; the rest were not read`);
  return items;
}

function poisonFindings(hits: PoisonHit[], findings: Findings, subject: string): void {
  // One finding per kind per subject, naming up to three places: enough to act on without flooding.
  const byKind = new Map<string, PoisonHit[]>();
  for (const hit of hits) byKind.set(hit.kind, [...(byKind.get(hit.kind) ?? []), hit]);
  for (const [kind, group] of byKind) {
    const first = group[0];
    if (!first) continue;
    const where = group.slice(0, 3).map((h) => h.path).join(', ');
    const more = group.length > 3 ? ` and ${group.length - 3} more` : '';
    const severity = kind === 'private-use' || kind === 'control-character' ? 'warning' : 'critical';
    findings.add(severity, `possible tool poisoning: ${first.detail} in ${where}${more}`, subject);
  }
}

/** A declared input or output schema must be an object schema that compiles. */
function checkObjectSchema(label: string, schema: unknown, findings: Findings, tool: string): void {
  if (!isObject(schema) || schema.type !== 'object') {
    findings.add('error', `${label} is not an object schema ({"type": "object", ...})`, tool);
    return;
  }
  const compiled = schemaValidator(schema);
  if (!compiled.ok) findings.add('error', `${label} does not compile: ${compiled.error}`, tool);
}

function toolFindings(entry: ToolEntry, findings: Findings): void {
  const { raw, name, verdict } = entry;
  if (!TOOL_NAME.test(name)) findings.add('warning', 'name does not follow the spec rule (1-128 of A-Z a-z 0-9 _ - .)', name);
  const declared = verdict.declared;
  if (declared === undefined) {
    findings.add('warning', 'no annotations: destructive by spec default', name);
  } else if (verdict.class === 'unclassifiable') {
    findings.add('error', `malformed or ambiguous entry: ${verdict.reasons.join('; ')}`, name);
  } else if (isObject(declared)) {
    if (declared.readOnlyHint === true && declared.destructiveHint === true) {
      findings.add('error', 'contradictory annotations: readOnlyHint: true with destructiveHint: true', name);
    }
    const known = new Set<string>([...HINT_NAMES, 'title']);
    const unknown = Object.keys(declared).filter((k) => !known.has(k));
    if (unknown.length > 0) findings.add('info', `unknown annotation keys: ${unknown.slice(0, 5).join(', ')}`, name);
  }
  if (typeof raw.description !== 'string' || raw.description.trim() === '') {
    findings.add('warning', 'missing description: a model has only the name to go on', name);
  }
  if (raw.inputSchema === undefined) findings.add('error', 'missing inputSchema (required by the spec)', name);
  else checkObjectSchema('inputSchema', raw.inputSchema, findings, name);
  if (raw.outputSchema === undefined) findings.add('info', 'no outputSchema: structured results cannot be checked', name);
  else checkObjectSchema('outputSchema', raw.outputSchema, findings, name);
  poisonFindings(scanJson(raw), findings, name);
}

/** List and judge the tools. */
export async function inspectTools(connection: ServerConnection, findings: Findings, limits: ListingLimits = DEFAULT_LIMITS): Promise<{ tools: ToolEntry[]; listed: number }> {
  const declaredTools = isObject(connection.server.capabilities.tools);
  const listed = await listAll(connection, 'tools/list', 'tools', findings, limits);
  if (listed === undefined) return { tools: [], listed: 0 };
  if (!declaredTools && listed.length > 0) findings.add('warning', 'server lists tools without declaring the tools capability');

  const catalog = classifyTools(listed, { trustReadOnlyHints: false });
  for (const problem of catalog.problems) findings.add('error', `malformed tools/list entry: ${problem}`);
  const tools: ToolEntry[] = [];
  const seen = new Set<string>();
  listed.forEach((raw, index) => {
    if (!isObject(raw) || typeof raw.name !== 'string' || raw.name === '') {
      if (isObject(raw)) poisonFindings(scanJson(raw), findings, `#${index}`);
      return;
    }
    const verdict = catalog.verdicts.get(raw.name);
    if (!verdict || seen.has(raw.name)) {
      if (seen.has(raw.name)) poisonFindings(scanJson(raw), findings, raw.name);
      return;
    }
    seen.add(raw.name);
    const entry: ToolEntry = { name: raw.name, raw, verdict };
    tools.push(entry);
    toolFindings(entry, findings);
  });

  const unannotated = tools.filter((t) => t.verdict.declared === undefined).length;
  if (unannotated > 0) {
    findings.add(
      'warning',
      `${unannotated} of ${tools.length} tools declare no annotations: the spec makes them destructive, so they are not executed by default`,
    );
  }
  if (listed.length === 0) findings.add('info', 'server lists no tools');
  return { tools, listed: listed.length };
}

function contentBytes(result: unknown): number | undefined {
  if (!isObject(result) || !Array.isArray(result.contents)) return undefined;
  let bytes = 0;
  for (const item of result.contents) {
    if (!isObject(item)) continue;
    if (typeof item.text === 'string') bytes += Buffer.byteLength(item.text, 'utf8');
    if (typeof item.blob === 'string') bytes += Math.floor((item.blob.length * 3) / 4);
  }
  return bytes;
}

/** List resources and templates, and read the first few resources. */
export async function inspectResources(
  connection: ServerConnection,
  findings: Findings,
  limits: ListingLimits = DEFAULT_LIMITS,
): Promise<{ resources: ResourceReport[]; templates: number }> {
  if (!isObject(connection.server.capabilities.resources)) return { resources: [], templates: 0 };
  const listed = (await listAll(connection, 'resources/list', 'resources', findings, limits)) ?? [];
  const templates = (await listAll(connection, 'resources/templates/list', 'resourceTemplates', findings, limits)) ?? [];
  templates.forEach((t, i) => poisonFindings(scanJson(t), findings, `resource template ${isObject(t) && typeof t.uriTemplate === 'string' ? t.uriTemplate : `#${i}`}`));

  const reports: ResourceReport[] = [];
  if (listed.length > limits.maxResources) {
    findings.add('info', `read the first ${limits.maxResources} of ${listed.length} resources`);
  }
  for (const [index, entry] of listed.entries()) {
    if (!isObject(entry) || typeof entry.uri !== 'string') {
      findings.add('error', `resources/list entry #${index} has no uri`);
      continue;
    }
    poisonFindings(scanJson(entry), findings, `resource ${entry.uri}`);
    if (index >= limits.maxResources) continue;
    const report: ResourceReport = {
      uri: entry.uri,
      ...(typeof entry.name === 'string' ? { name: entry.name } : {}),
      ...(typeof entry.mimeType === 'string' ? { mimeType: entry.mimeType } : {}),
      ok: false,
    };
    connection.during = `reading resource ${entry.uri}`;
    const outcome = await connection.request('resources/read', { uri: entry.uri });
    connection.during = undefined;
    if (!outcome.ok) {
      report.error = outcome.message;
      findings.add('warning', `resources/read failed: ${outcome.message}`, `resource ${entry.uri}`);
    } else {
      const bytes = contentBytes(outcome.result);
      if (bytes === undefined) {
        report.error = 'result has no "contents" array';
        findings.add('error', 'resources/read result has no "contents" array', `resource ${entry.uri}`);
      } else {
        report.ok = true;
        report.bytes = bytes;
        if (bytes > limits.maxResourceBytes) findings.add('warning', `resource is ${bytes} bytes: large for a model's context`, `resource ${entry.uri}`);
      }
    }
    reports.push(report);
  }
  return { resources: reports, templates: templates.length };
}

async function completeArgument(connection: ServerConnection, prompt: string, argument: string, soFar: Record<string, string>): Promise<string | undefined> {
  const outcome = await connection.request('completion/complete', {
    ref: { type: 'ref/prompt', name: prompt },
    argument: { name: argument, value: '' },
    context: { arguments: soFar },
  });
  if (!outcome.ok || !isObject(outcome.result) || !isObject(outcome.result.completion)) return undefined;
  const values = outcome.result.completion.values;
  return Array.isArray(values) && typeof values[0] === 'string' ? values[0] : undefined;
}

/** List prompts and render each with generated arguments (completions first, when the server offers them). */
export async function inspectPrompts(connection: ServerConnection, findings: Findings, limits: ListingLimits = DEFAULT_LIMITS): Promise<PromptReport[]> {
  if (!isObject(connection.server.capabilities.prompts)) return [];
  const listed = (await listAll(connection, 'prompts/list', 'prompts', findings, limits)) ?? [];
  const canComplete = isObject(connection.server.capabilities.completions);
  const reports: PromptReport[] = [];
  if (listed.length > limits.maxPrompts) findings.add('info', `rendered the first ${limits.maxPrompts} of ${listed.length} prompts`);
  for (const [index, entry] of listed.entries()) {
    if (!isObject(entry) || typeof entry.name !== 'string') {
      findings.add('error', `prompts/list entry #${index} has no name`);
      continue;
    }
    const subject = `prompt ${entry.name}`;
    poisonFindings(scanJson(entry), findings, subject);
    if (index >= limits.maxPrompts) continue;
    const args: Record<string, string> = {};
    const declaredArgs = Array.isArray(entry.arguments) ? entry.arguments : [];
    for (const arg of declaredArgs) {
      if (!isObject(arg) || typeof arg.name !== 'string' || arg.required !== true) continue;
      const completed = canComplete ? await completeArgument(connection, entry.name, arg.name, args) : undefined;
      args[arg.name] = completed ?? String(generateValue({ type: 'string' }).value);
    }
    connection.during = `rendering ${subject}`;
    const outcome = await connection.request('prompts/get', { name: entry.name, arguments: args });
    connection.during = undefined;
    const report: PromptReport = { name: entry.name, ok: false, arguments: args };
    if (!outcome.ok) {
      report.error = outcome.message;
      findings.add('warning', `prompts/get failed with generated arguments: ${outcome.message}`, subject);
    } else if (!isObject(outcome.result) || !Array.isArray(outcome.result.messages)) {
      report.error = 'result has no "messages" array';
      findings.add('error', 'prompts/get result has no "messages" array', subject);
    } else {
      report.ok = true;
      report.messages = outcome.result.messages.length;
    }
    reports.push(report);
  }
  return reports;
}

/** Fetch tools/list again, all pages; listing problems were reported the first time, so they are dropped. */
export async function fetchToolList(connection: ServerConnection, limits: ListingLimits = DEFAULT_LIMITS): Promise<unknown[] | undefined> {
  return listAll(connection, 'tools/list', 'tools', new Findings(), limits);
}

/** Fetch tools/list again (after a list_changed) and say how it differs from what was inspected. */
export async function toolListChanges(connection: ServerConnection, before: readonly ToolEntry[], limits: ListingLimits = DEFAULT_LIMITS): Promise<string[] | undefined> {
  const after = await fetchToolList(connection, limits);
  if (after === undefined) return undefined;
  const now = new Map<string, Record<string, unknown>>();
  for (const entry of after) if (isObject(entry) && typeof entry.name === 'string') now.set(entry.name, entry);
  const then = new Map(before.map((t) => [t.name, t.raw]));
  const changes: string[] = [];
  const added = [...now.keys()].filter((n) => !then.has(n));
  const removed = [...then.keys()].filter((n) => !now.has(n));
  if (added.length > 0) changes.push(`added ${added.slice(0, 5).join(', ')}`);
  if (removed.length > 0) changes.push(`removed ${removed.slice(0, 5).join(', ')}`);
  for (const [name, raw] of then) {
    const current = now.get(name);
    if (!current) continue;
    if (JSON.stringify(current.annotations) !== JSON.stringify(raw.annotations)) {
      changes.push(`annotations of ${name} changed from ${JSON.stringify(raw.annotations) ?? 'none'} to ${JSON.stringify(current.annotations) ?? 'none'}`);
    } else if (JSON.stringify(current) !== JSON.stringify(raw)) {
      changes.push(`${name} changed (description or schema)`);
    }
  }
  return changes;
}
