/**
 * A listing's work done once over a small made-up catalog, its results dropped, while the wrapper waits for its
 * server to start. The first reading of an entry compiles the hidden-text patterns (two alternations of every
 * phrase and character class: about 3 ms the first two times V8 runs them, as bytecode and then as machine code)
 * and the functions that classify and annotate it; done here, that work sits inside the server's start-up rather
 * than in the first listing the client waits for.
 *
 * Pure: a cache of its own, nothing kept, nothing sent. It never sees a real entry, so it decides nothing.
 */
import { classifyTools, isReadOnlyClass, type Verdict } from '../classify/classify.js';
import { jsonText } from '../classify/definition.js';
import { EntryFlags } from '../classify/entry-flags.js';
import { annotatedText, annotationsOf } from './annotate.js';

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

/** Run it; the verdicts of the sample (for a test to see that it took the path a plain listing takes). */
export function warmListingPath(): Verdict[] {
  const opts = { trustReadOnlyHints: false };
  const texts = SAMPLE.map((entry) => jsonText(entry));
  const verdicts: Verdict[] = [];
  // twice, with a fresh cache each time (each reads every text): V8 compiles a pattern to machine code on its
  // second run, so by the end of the second round the real listing finds both tiers done
  for (let round = 0; round < 2; round++) {
    const flags = new EntryFlags();
    const catalog = classifyTools(SAMPLE, opts, (entry, i) => flags.classify(entry, texts[i]!, opts));
    SAMPLE.forEach((entry, i) => {
      const verdict = catalog.verdicts.get(entry.name as string)!;
      if (round === 1) verdicts.push(verdict);
      annotatedText(entry, texts[i]!, annotationsOf(entry, verdict, isReadOnlyClass(verdict.class)));
    });
  }
  return verdicts;
}
