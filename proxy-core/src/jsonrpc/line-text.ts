/**
 * A long line's text, decoded once. The relay parses a server's line from its text, and the first page of a big
 * catalog (wrap/first-page.ts) reads that same line's text again for hidden text, in the same task: a 5 MB page
 * decoded twice cost 12 to 14 ms more of the client's wait. So the text of the last long line decoded is kept,
 * by the very buffer it came from, until the task that decoded it ends (a microtask lets it go), never longer: a
 * 10 MB result is not held past its relay. Anything else is decoded as always.
 */

/** Shorter lines are decoded each time they are read (a few microseconds). */
const LONG_LINE = 64 * 1024;

let kept: { line: Buffer; text: string } | undefined;

/** `line` as UTF-8 text: the text already decoded when it is the same buffer as the last long line, in this task. */
export function lineText(line: Buffer): string {
  const last = kept;
  if (last !== undefined && last.line === line) return last.text;
  const text = line.toString('utf8');
  if (line.length >= LONG_LINE) {
    const entry = { line, text };
    kept = entry;
    queueMicrotask(() => {
      if (kept === entry) kept = undefined;
    });
  }
  return text;
}
