/**
 * A listing's work done once over a small made-up catalog, its results dropped, while the wrapper waits for its
 * server to start. The first reading of an entry compiles the hidden-text patterns (two alternations of every
 * phrase and character class: about 3 ms the first two times V8 runs them, as bytecode and then as machine code)
 * and the functions that classify and annotate it; done here, that work sits inside the server's start-up rather
 * than in the first listing the client waits for. The sample goes both ways a client's answer goes, from an
 * answer's bytes as the server writes them to the annotated listing written out: as a whole (first-page.ts, the
 * client's first page) and entry by entry (the pages after it, and the wrapper's own listing), so those
 * functions are compiled by then too.
 *
 * Pure: a cache of its own, nothing kept, nothing sent. It never sees a real entry, so it decides nothing.
 */
import { classifyTools, isReadOnlyClass, type Verdict } from '../classify/classify.js';
import { jsonText } from '../classify/definition.js';
import { classifyClean, EntryFlags } from '../classify/entry-flags.js';
import { AnnotatedListing } from './annotated-listing.js';
import { answerFirstPage } from './first-page.js';
import { PageBytes } from './page-bytes.js';

const SAMPLE: readonly Record<string, unknown>[] = [
  {
    name: 'read_note',
    description: 'Read one note by its title. Returns the text of the note, unchanged.',
    inputSchema: { type: 'object', properties: { title: { type: 'string', description: 'the title of the note' } }, required: ['title'] },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'delete_note',
    description: 'Delete a note.',
    inputSchema: { type: 'object', properties: { title: { type: 'string' } } },
  },
];

/**
 * Run it; the verdicts of the sample, and whether its page was answered as a whole (for a test to see that it
 * took the paths a plain listing takes).
 */
export function warmListingPath(): { verdicts: Verdict[]; asAWhole: boolean } {
  const opts = { trustReadOnlyHints: false };
  const texts = SAMPLE.map((entry) => jsonText(entry));
  const verdicts: Verdict[] = [];
  let asAWhole = true;
  // twice, with a fresh cache each time (each reads every text): V8 compiles a pattern to machine code on its
  // second run, so by the end of the second round the real listing finds both tiers done
  for (let round = 0; round < 2; round++) {
    const flags = new EntryFlags();
    const catalog = classifyTools(SAMPLE, opts, (entry, i) => flags.classify(entry, texts[i]!, opts));
    const message = { jsonrpc: '2.0', id: round, result: { tools: SAMPLE } };
    const bytes = Buffer.from(JSON.stringify(message));
    const page = PageBytes.of(round, bytes);
    const result = message.result as Record<string, unknown>;
    const whole = answerFirstPage(message, result, bytes, (entry) => classifyClean(entry, opts), (v) => isReadOnlyClass(v.class));
    asAWhole &&= whole !== undefined;
    new AnnotatedListing().answer(message, result, [...SAMPLE], () => texts, {
      inputs: [],
      verdictOf: (name) => catalog.verdicts.get(name)!,
      runsWithoutAsking: (v) => isReadOnlyClass(v.class),
      log: () => {},
    }, page);
    if (round === 1) for (const entry of SAMPLE) verdicts.push(catalog.verdicts.get(entry.name as string)!);
  }
  return { verdicts, asAWhole };
}
