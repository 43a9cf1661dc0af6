/**
 * A wrapper session as Activity names it: from when to when, and by who ran it and when (how a rollback names
 * it). The story's sentences are the broker's (`sessions.story`, the words `airlock history --story` prints).
 */
import { formatDateTime } from './time.js';

export interface SessionFacts {
  id: string;
  title: string;
  startedAt: number;
  endedAt: number | null;
}

/** "started 2026-12-01 10:02:03, ended 10:40:00" (the end's date only when it differs). */
export function sessionWhen(s: Pick<SessionFacts, 'startedAt' | 'endedAt'>): string {
  const start = formatDateTime(s.startedAt);
  if (s.endedAt === null) return `started ${start}, still connected`;
  const end = formatDateTime(s.endedAt);
  return `started ${start}, ended ${end.slice(0, 10) === start.slice(0, 10) ? end.slice(11) : end}`;
}

/** "Claude Desktop's filesystem (started 2026-12-01 10:02:03)". */
export function sessionName(s: Pick<SessionFacts, 'title' | 'startedAt'>): string {
  return `${s.title} (started ${formatDateTime(s.startedAt)})`;
}
