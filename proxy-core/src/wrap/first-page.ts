/**
 * The client's tools/list page answered as a whole, before the wrapper has a listing of its own: at start-up.
 * The client waits for this answer, and on a big catalog (10,000 tools, 5 MB) the usual way
 * (annotated-listing.ts) spends most of that wait on what it keeps for later pages: each entry's JSON text, the
 * key under which its hidden-text findings, its declaration and its annotated bytes are kept. With no listing
 * of the wrapper's own there is nothing to reuse, and no verdict to weigh but the entry's own (verdicts.ts reads
 * only the entry then). So the page's text is checked for hidden text once (the text the relay parsed, not
 * decoded again: jsonrpc/line-text.ts), each entry is classified, and the answer is written entry by entry into
 * its bytes (line-bytes.ts): the very bytes the usual way writes (annotate.ts). What the usual way reads first is
 * read once the answer has left (client-requests.ts).
 *
 * Only a page whose text shows nothing to find (hidden-text.ts `jsonTextMayHaveFindings`) and whose entries are
 * each an object with a name no other entry has: anything else goes the usual way, which says what is wrong.
 */
import { isAscii } from 'node:buffer';
import type { Verdict } from '../classify/classify.js';
import { jsonTextMayHaveFindings } from '../classify/hidden-text.js';
import { lineText } from '../jsonrpc/line-text.js';
import { isObject } from '../jsonrpc/messages.js';
import { annotatedEntry } from './annotate.js';
import { ANNOTATION_ESTIMATE, aroundTools, LineBytes } from './line-bytes.js';

const DEL = 0x7f;

/**
 * The annotated answer to `message` (its result `result`), whose bytes as the server wrote them are `raw` (any
 * JSON text of it will do), or undefined when the page must go the usual way. `verdictOf` judges an entry with
 * no hidden-text findings.
 */
export function answerFirstPage(
  message: Record<string, unknown>,
  result: Record<string, unknown>,
  raw: Buffer,
  verdictOf: (entry: unknown) => Verdict,
  runsWithoutAsking: (v: Verdict) => boolean,
): { line: Buffer; advertised: Map<string, boolean> } | undefined {
  const tools = result.tools;
  if (!Array.isArray(tools)) return undefined;
  const names = new Set<string>();
  for (const entry of tools) {
    if (!isObject(entry) || typeof entry.name !== 'string' || entry.name === '' || names.has(entry.name)) return undefined;
    names.add(entry.name);
  }
  // bytes that are all ASCII but DEL hold no character a check looks for: only the phrases are read
  if (jsonTextMayHaveFindings(lineText(raw), isAscii(raw) && !raw.includes(DEL))) return undefined;
  // every entry has a usable name of its own here: annotate.ts would drop (and log) none
  const [head, tail] = aroundTools(message, result);
  const out = new LineBytes(head.length + tail.length + raw.length + tools.length * ANNOTATION_ESTIMATE);
  out.text(head);
  out.text('[');
  const advertised = new Map<string, boolean>();
  for (let i = 0; i < tools.length; i++) {
    const entry = tools[i] as Record<string, unknown>;
    const verdict = verdictOf(entry);
    const readOnly = runsWithoutAsking(verdict);
    advertised.set(entry.name as string, readOnly);
    if (i > 0) out.text(',');
    out.text(JSON.stringify(annotatedEntry(entry, verdict, readOnly)));
  }
  out.text(']');
  out.text(tail);
  out.text('\n');
  return { line: out.done(), advertised };
}
