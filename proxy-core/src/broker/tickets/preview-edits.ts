/**
 * An `edit` file tool's change, applied to the file's text the way the reference filesystem server first tries
 * it: each `{oldText,newText}` in order, replacing the first exact occurrence in the text as edited so far.
 * Pure. The server also matches an edit line by line ignoring whitespace when the exact text is not there; the
 * preview does not guess at that, it says so (the caller turns `missed` into a caveat).
 */

export interface TextEdit {
  oldText: string;
  newText: string;
}

/** The edits of a call's argument, or why they are not edits. */
export function parseEdits(value: unknown, arg: string): TextEdit[] | string {
  if (!Array.isArray(value)) return `"${arg}" is not a list of edits`;
  const edits: TextEdit[] = [];
  for (const [i, e] of value.entries()) {
    if (typeof e !== 'object' || e === null || typeof (e as TextEdit).oldText !== 'string' || typeof (e as TextEdit).newText !== 'string') {
      return `edit ${i + 1} of "${arg}" is not {oldText, newText} text`;
    }
    edits.push({ oldText: (e as TextEdit).oldText, newText: (e as TextEdit).newText });
  }
  return edits;
}

export interface AppliedEdits {
  text: string;
  /** How many edits were applied. */
  applied: number;
  /** The (0-based) edits whose oldText is not in the text exactly: left out. */
  missed: number[];
}

export function applyEdits(text: string, edits: readonly TextEdit[]): AppliedEdits {
  let out = text;
  const missed: number[] = [];
  edits.forEach((e, i) => {
    const at = out.indexOf(e.oldText);
    if (at === -1) missed.push(i);
    // by position, not String.replace: a `$&` in newText is text, not a pattern
    else out = out.slice(0, at) + e.newText + out.slice(at + e.oldText.length);
  });
  return { text: out, applied: edits.length - missed.length, missed };
}
