/**
 * A wrapper session told as a story: its heading (who, which server, from when to when) and its calls oldest
 * first, each as a sentence (protocol/activity.ts storySentence, the words `airlock history --story` prints).
 */
import type { HistoryItem, HistoryQuery } from '@airlock/proxy-core/protocol/api';
import { isUndoEntry, sessionTitle, storySentence } from '@airlock/proxy-core/protocol/activity';
import { EXPORT_PAGE } from '@airlock/proxy-core/protocol/activity-export';
import { formatDateTime } from './time.js';

export interface SessionFacts {
  id: string;
  client: string;
  server: string;
  startedAt: number;
  endedAt: number | null;
}

/** The most calls a story tells: the newest of a longer session (it says so). */
export const STORY_MAX = 5000;

export interface StoryLine {
  id: string;
  at: number;
  sentence: string;
  undo: boolean;
}

export interface Story {
  title: string;
  when: string;
  lines: StoryLine[];
  /** Older calls left out (over STORY_MAX). */
  cut: boolean;
}

/** "started 2026-12-01 10:02:03, ended 10:40:00" (the end's date only when it differs). */
export function sessionWhen(s: Pick<SessionFacts, 'startedAt' | 'endedAt'>): string {
  const start = formatDateTime(s.startedAt);
  if (s.endedAt === null) return `started ${start}, still connected`;
  const end = formatDateTime(s.endedAt);
  return `started ${start}, ended ${end.slice(0, 10) === start.slice(0, 10) ? end.slice(11) : end}`;
}

/** "Claude Desktop's filesystem (started 2026-12-01 10:02:03)": how a rollback names the session. */
export function sessionName(s: SessionFacts): string {
  return `${sessionTitle(s)} (started ${formatDateTime(s.startedAt)})`;
}

export function storyOf(session: SessionFacts, newestFirst: readonly HistoryItem[], cut: boolean): Story {
  const lines: StoryLine[] = [];
  for (let i = newestFirst.length - 1; i >= 0; i--) {
    const c = newestFirst[i]!;
    lines.push({ id: c.id, at: c.startedAt, sentence: storySentence(c), undo: isUndoEntry(c) });
  }
  return { title: sessionTitle(session), when: sessionWhen(session), lines, cut };
}

/** The session's calls, newest first, read page by page up to STORY_MAX. */
export async function readSessionCalls(id: string, page: (q: HistoryQuery) => Promise<{ calls: HistoryItem[]; nextCursor: number | null }>): Promise<{ calls: HistoryItem[]; cut: boolean }> {
  const calls: HistoryItem[] = [];
  let before: number | undefined;
  for (;;) {
    const r = await page({ session: id, summary: true, limit: Math.min(EXPORT_PAGE, STORY_MAX - calls.length), ...(before !== undefined ? { before } : {}) });
    calls.push(...r.calls);
    if (r.nextCursor === null) return { calls, cut: false };
    if (calls.length >= STORY_MAX) return { calls, cut: true };
    before = r.nextCursor;
  }
}
