/**
 * Hidden-text findings of tool entries, kept by the exact JSON text of the entry: a catalog listed again
 * unchanged is not read again, and the wrapper's own listing and the client's pages share one reading.
 *
 * The key is the whole entry as JSON.stringify writes it (every member, every nested schema description, in
 * the server's order), and the findings are a pure function of the entry: any change to the entry, however
 * small or deep, is another key and is read afresh. A text that is not native JSON (jsonText's canonical
 * fallback for an entry nested past what JSON.stringify takes, marked by a leading NUL) is never kept: two
 * member orders share it, and the scan's bounds read them in different orders. The text itself is read first
 * (hidden-text.ts `mayHaveFindings`): an entry whose text has nothing to find is not walked string by string.
 */
import { classifyTool, hiddenTextFlags, type ClassifyOptions, type Verdict } from './classify.js';
import { mayHaveFindings } from './hidden-text.js';

/** The findings of an entry with nothing to find. */
const NO_FINDINGS: readonly string[] = [];

/**
 * The verdict of an entry whose text is already known to have nothing to find: a page whose whole text was
 * checked at once (wrap/first-page.ts), and a listing taken from such a page.
 */
export function classifyClean(entry: unknown, opts: ClassifyOptions): Verdict {
  return classifyTool(entry, opts, NO_FINDINGS);
}

/** Characters of entry text kept at most (past it, the cache starts over). */
const MAX_CHARS = 32 * 1024 * 1024;

export class EntryFlags {
  private readonly byText = new Map<string, readonly string[]>();
  private chars = 0;

  /** The findings of `entry`, whose JSON text is `text`. */
  of(entry: unknown, text: string): readonly string[] {
    const known = this.byText.get(text);
    if (known) return known;
    if (text.charCodeAt(0) === 0) return hiddenTextFlags(entry);
    // most entries: the text read in two passes shows there is nothing to find, string by string
    const flags = mayHaveFindings(text) ? hiddenTextFlags(entry) : NO_FINDINGS;
    if (this.chars + text.length > MAX_CHARS) {
      this.byText.clear();
      this.chars = 0;
    }
    this.byText.set(text, flags);
    this.chars += text.length;
    return flags;
  }

  /** classifyTool with the findings read through this cache. */
  classify(entry: unknown, text: string, opts: ClassifyOptions): Verdict {
    return classifyTool(entry, opts, this.of(entry, text));
  }
}
