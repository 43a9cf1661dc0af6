/**
 * A client's tools/list answer, annotated (annotate.ts) and written out, with each entry's annotated JSON kept:
 * a page listed again unchanged is answered by joining what was written, not by classifying and serialising
 * every entry again.
 *
 * An entry's annotated text is a function of the entry's exact JSON text and of what the verdicts read besides
 * (`inputs`: the policy pushed, the wrapper's listing and every declaration seen, the trust and the withdrawn
 * claims). The kept texts are used only while those inputs are the very same, and for an entry whose text is
 * the very same: anything else (a rule, a pin, E-Stop, trust, a withdrawn claim, a new listing, one character
 * of one nested schema description) is annotated afresh. A name listed twice in a page is annotated afresh too
 * (the page's own verdict then says so).
 */
import { isObject } from '../jsonrpc/messages.js';
import { annotatedText, annotateToolsResult, annotationsOf } from './annotate.js';
import type { Verdict } from '../classify/classify.js';
import { ANNOTATION_ESTIMATE, aroundTools, LineBytes } from './line-bytes.js';
import type { PageBytes } from './page-bytes.js';

/** What one entry was annotated as. */
interface Written {
  /** The entry's JSON text as the server listed it. */
  text: string;
  /** The answer line it was written in, and where (the annotated JSON is not held twice, as text and bytes). */
  bytes: Buffer;
  start: number;
  end: number;
  /** What its readOnlyHint told the client. */
  readOnly: boolean;
}

export interface PageAnnotation {
  /** The tools/list answer, framed (one JSON line). */
  line: Buffer;
  /** What the client was told of each tool: name -> readOnlyHint. */
  advertised: Map<string, boolean>;
}

export interface AnnotateInputs {
  /** Identities and values the verdicts read besides the entry: equal (===, element by element) means unchanged. */
  inputs: readonly unknown[];
  /** The verdict for the entry at `index` of the page, named `name`, listed `count` times in the page. */
  verdictOf(name: string, entry: unknown, index: number, count: number): Verdict;
  runsWithoutAsking(v: Verdict): boolean;
  log(msg: string): void;
}

/** The last page answered, by its bytes: the same bytes with the same inputs get the same answer. */
interface LastPage {
  body: Buffer;
  inputs: readonly unknown[];
  /** The answer line after the prefix (the id goes in front), as the bytes written. */
  rest: Buffer;
  advertised: Map<string, boolean>;
}

export class AnnotatedListing {
  private inputs: readonly unknown[] = [];
  private written = new Map<string, Written>();
  private last: LastPage | null = null;

  /**
   * The answer to a page with the very bytes of the last one answered, with the very same inputs, as its prefix
   * and the rest of the line kept (written as they are: a 5 MB answer is not copied to be sent again); else
   * undefined.
   */
  again(page: PageBytes, inputs: readonly unknown[]): { line: [Buffer, Buffer]; advertised: Map<string, boolean> } | undefined {
    const last = this.last;
    if (!last || !sameInputs(last.inputs, inputs) || !page.same(last.body)) return undefined;
    return { line: [Buffer.from(page.prefix, 'utf8'), last.rest], advertised: last.advertised };
  }

  /**
   * Annotate `message`, a tools/list answer whose result is `result` and whose entries' JSON texts are `textsOf()`,
   * and write it out as a line. `page`: the answer's bytes, when the server wrote it the usual way.
   */
  answer(message: Record<string, unknown>, result: Record<string, unknown>, tools: unknown[], textsOf: () => readonly string[], a: AnnotateInputs, page?: PageBytes): PageAnnotation {
    const again = page ? this.again(page, a.inputs) : undefined;
    if (again) return { line: Buffer.concat(again.line), advertised: again.advertised };
    this.last = null;
    if (!sameInputs(this.inputs, a.inputs)) {
      this.inputs = a.inputs;
      this.written = new Map();
    }
    const texts = textsOf();
    const counts = new Map<string, number>();
    for (const t of tools) if (isObject(t) && typeof t.name === 'string') counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const [head, tail] = aroundTools(message, result);
    // written straight into the line's bytes: each entry's place in them is known as it is written, and no entry's
    // annotated text outlives its writing (a page of 10,000 entries is not held twice, as texts and as bytes)
    let estimate = head.length + tail.length + 2 * tools.length + 64;
    for (const text of texts) estimate += text.length + ANNOTATION_ESTIMATE;
    const out = new LineBytes(estimate);
    out.text(head);
    out.text('[');
    /** The entries to keep: name, text, readOnly, where in the line. */
    const keep: [string, string, boolean, number, number][] = [];
    const advertised = new Map<string, boolean>();
    let first = true;
    for (let i = 0; i < tools.length; i++) {
      const entry: unknown = tools[i];
      const text = texts[i]!;
      const name = isObject(entry) && typeof entry.name === 'string' ? entry.name : '';
      const unique = name !== '' && counts.get(name) === 1;
      const known = unique ? this.written.get(name) : undefined;
      if (!isObject(entry) || name === '') {
        // annotate.ts drops (and logs) an entry without a usable name: nothing is written
        annotateToolsResult({ tools: [entry] }, (n, e) => a.verdictOf(n, e, i, counts.get(n) ?? 0), a.runsWithoutAsking, a.log);
        continue;
      }
      if (!first) out.text(',');
      first = false;
      const start = out.length;
      let readOnly: boolean;
      if (known && known.text === text) {
        out.bytes(known.bytes, known.start, known.end);
        readOnly = known.readOnly;
      } else {
        const verdict = a.verdictOf(name, entry, i, counts.get(name) ?? 0);
        readOnly = a.runsWithoutAsking(verdict);
        out.text(annotatedText(entry, text, annotationsOf(entry, verdict, readOnly)));
      }
      if (unique) keep.push([name, text, readOnly, start, out.length]);
      advertised.set(name, readOnly);
    }
    out.text(']');
    out.text(tail);
    out.text('\n');
    // the bytes written are the ones kept (nothing writes into a buffer once it is sent)
    const bytes = out.done();
    // only what the last page listed is kept (a tool gone from it is not held in memory), each in these bytes
    const kept = new Map<string, Written>();
    for (const [name, text, readOnly, start, end] of keep) kept.set(name, { text, bytes, start, end, readOnly });
    this.written = kept;
    const prefix = page ? Buffer.from(page.prefix, 'utf8') : undefined;
    if (page && prefix && bytes.length > prefix.length && bytes.subarray(0, prefix.length).equals(prefix)) {
      this.last = { body: page.keep(), inputs: a.inputs, rest: bytes.subarray(prefix.length), advertised };
    }
    return { line: bytes, advertised };
  }
}

function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
