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
    /** The entries to keep: name, text, readOnly, at which place of `out`. */
    const keep: [string, string, boolean, number][] = [];
    const advertised = new Map<string, boolean>();
    const out: string[] = [];
    for (let i = 0; i < tools.length; i++) {
      const entry: unknown = tools[i];
      const text = texts[i]!;
      const name = isObject(entry) && typeof entry.name === 'string' ? entry.name : '';
      const unique = name !== '' && counts.get(name) === 1;
      const known = unique ? this.written.get(name) : undefined;
      if (known && known.text === text) {
        keep.push([name, text, known.readOnly, out.length]);
        out.push(known.bytes.toString('utf8', known.start, known.end));
        advertised.set(name, known.readOnly);
        continue;
      }
      if (!isObject(entry) || name === '') {
        // annotate.ts drops (and logs) an entry without a usable name: nothing is written
        annotateToolsResult({ tools: [entry] }, (n, e) => a.verdictOf(n, e, i, counts.get(n) ?? 0), a.runsWithoutAsking, a.log);
        continue;
      }
      const verdict = a.verdictOf(name, entry, i, counts.get(name) ?? 0);
      const readOnly = a.runsWithoutAsking(verdict);
      const json = annotatedText(entry, text, annotationsOf(entry, verdict, readOnly));
      if (unique) keep.push([name, text, readOnly, out.length]);
      out.push(json);
      advertised.set(name, readOnly);
    }
    // the tools array goes where the NUL is (JSON.stringify escapes every NUL of the message's own)
    const [head, tail] = withTools(message, result, '\u0000').split('\u0000') as [string, string];
    const line = `${head}[${out.join(',')}]${tail}\n`;
    // encoded once: the bytes written are the ones kept (nothing writes into a buffer once it is sent)
    const bytes = Buffer.from(line, 'utf8');
    // only what the last page listed is kept (a tool gone from it is not held in memory), each in these bytes
    const starts: number[] = [];
    let at = Buffer.byteLength(head, 'utf8') + 1;
    for (const json of out) {
      starts.push(at);
      at += Buffer.byteLength(json, 'utf8') + 1;
    }
    starts.push(at);
    const kept = new Map<string, Written>();
    for (const [name, text, readOnly, i] of keep) kept.set(name, { text, bytes, start: starts[i]!, end: starts[i + 1]! - 1, readOnly });
    this.written = kept;
    if (page && line.startsWith(page.prefix)) this.last = { body: page.keep(), inputs: a.inputs, rest: bytes.subarray(Buffer.byteLength(page.prefix, 'utf8')), advertised };
    return { line: bytes, advertised };
  }
}

function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The message as JSON with `result.tools` written as the given JSON text (members in their order). */
function withTools(message: Record<string, unknown>, result: Record<string, unknown>, tools: string): string {
  const members = (o: Record<string, unknown>, key: string, text: string): string => {
    const out: string[] = [];
    for (const k of Object.keys(o)) {
      if (k === key) out.push(`${JSON.stringify(k)}:${text}`);
      else if (o[k] !== undefined) out.push(`${JSON.stringify(k)}:${JSON.stringify(o[k])}`);
    }
    return `{${out.join(',')}}`;
  };
  return members(message, 'result', members(result, 'tools', tools));
}
