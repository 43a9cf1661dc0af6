import { describe, expect, test } from 'vitest';
import type { HistoryQuery } from '@airlock/proxy-core/protocol/api';
import { readSessionCalls, sessionName, sessionWhen, storyOf } from '../../../renderer/src/lib/session-story.js';
import { item } from '../../helpers/activity-rows.js';

const start = new Date(2026, 11, 1, 10, 2, 3).getTime();
const session = { id: 's1', client: 'claude-desktop', server: 'filesystem', startedAt: start, endedAt: start + 60_000 };

describe('session story', () => {
  test('oldest first, one sentence a call, undos marked', () => {
    const calls = [
      item('undo-1', 3, { client: 'airlock-undo', server: 'filesystem', argSummary: 'notes/a.md', undo: { available: true, kind: 'snapshot', undoOf: 'c1' } }),
      item('c1', 1, { client: 'claude-desktop', server: 'filesystem', argSummary: 'notes/a.md', decidedBy: 'rule', detail: 'allowed by rule r1 (allow write_file on filesystem)', undo: { available: false, kind: 'snapshot', state: 'undone' } }),
    ];
    const story = storyOf(session, calls, false);
    expect(story.title).toBe("Claude Desktop's filesystem");
    expect(story.when).toBe('started 2026-12-01 10:02:03, ended 10:03:03');
    expect(story.lines.map((l) => l.id)).toEqual(['c1', 'undo-1']);
    expect(story.lines[0]!.sentence).toBe("Claude Desktop's filesystem wrote notes/a.md (undone) — allowed by your rule r1 (allow write_file on filesystem).");
    expect(story.lines[1]).toMatchObject({ undo: true, sentence: "Airlock undid call c1 through filesystem's write_file (notes/a.md)." });
    expect(sessionName(session)).toBe("Claude Desktop's filesystem (started 2026-12-01 10:02:03)");
    expect(sessionWhen({ startedAt: start, endedAt: null })).toBe('started 2026-12-01 10:02:03, still connected');
  });

  test('reads the session page by page', async () => {
    const asked: HistoryQuery[] = [];
    const pages = [{ calls: [item('c2', 2)], nextCursor: 2 }, { calls: [item('c1', 1)], nextCursor: null }];
    const r = await readSessionCalls('s1', async (q) => (asked.push(q), pages.shift()!));
    expect(r).toMatchObject({ cut: false });
    expect(r.calls.map((c) => c.id)).toEqual(['c2', 'c1']);
    expect(asked[1]).toMatchObject({ session: 's1', summary: true, before: 2 });
  });
});
