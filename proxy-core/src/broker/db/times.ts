/**
 * A call's later times (asked, decided, forwarded, finished; migration 11) kept as milliseconds after its start
 * rather than as the full time: the offset is a small integer SQLite stores in 0 to 3 bytes, where the time took
 * 6 (or 8). Lossless: the offset is kept only when the start plus it gives back the very time (always for times
 * of the same clock); any other time is kept whole, as text marked '@' (a column of REAL affinity keeps such
 * text as it is), and read back as the number it was.
 */

/** What a time `t` of a call that started at `start` is stored as. */
export function afterStart(start: number, t: number | null | undefined): number | string | null {
  if (t === undefined || t === null) return null;
  const off = t - start;
  return start + off === t ? off : `@${String(t)}`;
}

/** The time a stored offset (or marked whole time) stands for; null for NULL. */
export function fromStart(start: unknown, stored: unknown): number | null {
  if (stored === null || stored === undefined) return null;
  if (typeof stored === 'string') return Number(stored.slice(1));
  return Number(start) + Number(stored);
}

/**
 * The same as afterStart in SQL, for an update that fills in a time of a row already stored (relative to that
 * row's start, the column `start`): `param` is the bound time, or NULL.
 */
export function afterStartSql(start: string, param: string): string {
  return `CASE WHEN ${param} IS NULL THEN NULL WHEN ${start} + (${param} - ${start}) = ${param} THEN ${param} - ${start} ELSE '@' || printf('%!.17g', ${param}) END`;
}

/** The time a stored column stands for, in SQL (the views that read as the old tables did). */
export function fromStartSql(start: string, stored: string): string {
  return `CASE WHEN typeof(${stored}) = 'text' THEN CAST(substr(${stored}, 2) AS REAL) ELSE ${start} + ${stored} END`;
}
