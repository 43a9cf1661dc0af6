/**
 * What the client sees in tools/list: annotations that state Airlock's verdict, not the server's claim.
 * readOnlyHint is true only where Airlock would run the tool without asking, so clients that auto-approve
 * on it approve only what Airlock would too. The declared annotations and the verdict go under _meta.
 */
import { HINT_NAMES, type Verdict } from '../classify/classify.js';
import { isObject } from '../jsonrpc/messages.js';

export const VERDICT_META_KEY = 'airlock/verdict';

/** Rewrite one tools/list result in place-safe fashion (returns a new result object). */
export function annotateToolsResult(
  result: Record<string, unknown>,
  verdictOf: (name: string, entry: unknown) => Verdict,
  runsWithoutAsking: (v: Verdict) => boolean,
  log: (msg: string) => void,
): { result: Record<string, unknown>; advertised: Map<string, boolean> } {
  const advertised = new Map<string, boolean>();
  if (!Array.isArray(result.tools)) return { result, advertised };
  const tools: unknown[] = [];
  for (const entry of result.tools) {
    if (!isObject(entry) || typeof entry.name !== 'string' || entry.name === '') {
      // unnameable entries cannot be called; passing them on would only break the client's parsing
      log(`airlock: dropped a tools/list entry without a usable name: ${JSON.stringify(entry)?.slice(0, 200)}`);
      continue;
    }
    const verdict = verdictOf(entry.name, entry);
    const readOnly = runsWithoutAsking(verdict);
    advertised.set(entry.name, readOnly);
    tools.push(annotatedEntry(entry, verdict, readOnly));
  }
  return { result: { ...result, tools }, advertised };
}

/** An entry as the client sees it: its own members, with `annotations` and `_meta` replaced (annotationsOf). */
export function annotatedEntry(entry: Record<string, unknown>, verdict: Verdict, readOnly: boolean): Record<string, unknown> {
  return { ...entry, ...annotationsOf(entry, verdict, readOnly) };
}

/** What replaces an entry's `annotations` and `_meta` (in their places, or after its other members when absent). */
export function annotationsOf(entry: Record<string, unknown>, verdict: Verdict, readOnly: boolean): { annotations: Record<string, unknown>; _meta: Record<string, unknown> } {
  const declared = entry.annotations;
  const annotations: Record<string, unknown> = {};
  if (isObject(declared)) {
    if (typeof declared.title === 'string') annotations.title = declared.title;
    for (const hint of HINT_NAMES) if (typeof declared[hint] === 'boolean') annotations[hint] = declared[hint];
  }
  annotations.readOnlyHint = readOnly;
  if (readOnly) delete annotations.destructiveHint;
  else annotations.destructiveHint = verdict.class !== 'mutating';
  const meta = isObject(entry._meta) ? { ...entry._meta } : {};
  meta[VERDICT_META_KEY] = { class: verdict.class, reasons: verdict.reasons, declared: declared ?? null, runsWithoutAsking: readOnly };
  return { annotations, _meta: meta };
}

/**
 * JSON.stringify({ ...entry, ...parts }), written from `text`, the entry's own JSON.stringify text, without
 * writing the rest of the entry again when its `annotations` are its last member or it has neither member
 * (and no `_meta`): its other members are then `text` up to where `annotations` begins. Any other entry is
 * written in full.
 */
export function annotatedText(entry: Record<string, unknown>, text: string, parts: { annotations: Record<string, unknown>; _meta: Record<string, unknown> }): string {
  const tail = `,"annotations":${JSON.stringify(parts.annotations)},"_meta":${JSON.stringify(parts._meta)}}`;
  if (!Object.hasOwn(entry, '_meta') && text.charCodeAt(0) !== 0) {
    const keys = Object.keys(entry);
    if (text.length > 2 && !Object.hasOwn(entry, 'annotations') && text.endsWith('}')) return `${text.slice(0, -1)}${tail}`;
    const own = Object.hasOwn(entry, 'annotations') ? JSON.stringify(entry.annotations) : undefined;
    if (keys.length > 1 && keys.at(-1) === 'annotations' && own !== undefined) {
      const was = `,"annotations":${own}}`;
      if (text.endsWith(was)) return `${text.slice(0, -was.length)}${tail}`;
    }
  }
  return JSON.stringify({ ...entry, ...parts });
}
