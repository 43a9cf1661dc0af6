/**
 * Every distinct declaration of each tool seen in this wrapper's life (the wrapper's own listings and the
 * client's pages), by its exact JSON text: a server may describe a tool one way to the wrapper and another way
 * to the client, or change it without saying so, and a tool is judged by the strictest of its declarations. A
 * change can tighten a verdict at once, and never loosens it; a server that churns past a bound is not believed.
 */
import { type Catalog, stricter, type Verdict } from '../classify/classify.js';

/** Past this many distinct declarations of one tool, it is unclassifiable: a server that churns is not believed. */
const MAX_DECLARATIONS_PER_TOOL = 8;
/** Names remembered across listings (bounds memory against a server that invents names on every listing). */
const MAX_NAMES_SEEN = 50_000;

/** One declaration (most tools have only ever had one), or every one by its JSON text. */
type Seen = { text: string; entry: unknown } | Map<string, unknown>;

export class Declarations {
  /** Tool name -> its declarations (a Map only once there are two: 10,000 tools are not 10,000 Maps). */
  private readonly seen = new Map<string, Seen>();

  /** Remember one declaration; true when it is new (and kept). */
  remember(name: string, text: string, entry: unknown): boolean {
    const forName = this.seen.get(name);
    if (!forName) {
      if (this.seen.size >= MAX_NAMES_SEEN) return false;
      this.seen.set(name, { text, entry });
      return true;
    }
    if (!(forName instanceof Map)) {
      if (forName.text === text) return false;
      this.seen.set(name, new Map([[forName.text, forName.entry], [text, entry]]));
      return true;
    }
    // one past the limit is kept, so that "too many declarations" can be told from "exactly at the limit"
    if (forName.has(text) || forName.size > MAX_DECLARATIONS_PER_TOOL) return false;
    forName.set(text, entry);
    return true;
  }

  /** Give each tool of `catalog` the strictest verdict among its declarations (`classify` judges one), in place. */
  applyStrictest(catalog: Catalog, classify: (entry: unknown, text: string) => Verdict): void {
    for (const [name, verdict] of catalog.verdicts) {
      const declarations = this.seen.get(name);
      if (!(declarations instanceof Map) || declarations.size < 2) continue;
      if (declarations.size > MAX_DECLARATIONS_PER_TOOL) {
        catalog.verdicts.set(name, {
          ...verdict,
          class: 'unclassifiable',
          reasons: [`the server declared "${name}" in more than ${MAX_DECLARATIONS_PER_TOOL} different ways during this session; none is believed`],
        });
        continue;
      }
      let strictest = verdict;
      for (const [text, entry] of declarations) {
        const other = classify(entry, text);
        if (other.class !== strictest.class && stricter(other.class, strictest.class) === other.class) strictest = other;
      }
      if (strictest !== verdict) {
        catalog.verdicts.set(name, {
          ...verdict,
          class: strictest.class,
          reasons: [`the server declared "${name}" differently during this session; the strictest declaration seen applies`, ...strictest.reasons],
        });
      }
    }
  }
}
