import { expect, test } from 'vitest';
import { sessionName, sessionWhen } from '../../../renderer/src/lib/session-story.js';

const start = new Date(2026, 11, 1, 10, 2, 3).getTime();

test('a session by who ran it and when', () => {
  expect(sessionWhen({ startedAt: start, endedAt: start + 60_000 })).toBe('started 2026-12-01 10:02:03, ended 10:03:03');
  expect(sessionWhen({ startedAt: start, endedAt: start + 86_400_000 })).toBe('started 2026-12-01 10:02:03, ended 2026-12-02 10:02:03');
  expect(sessionWhen({ startedAt: start, endedAt: null })).toBe('started 2026-12-01 10:02:03, still connected');
  expect(sessionName({ title: "Claude Desktop's filesystem", startedAt: start })).toBe("Claude Desktop's filesystem (started 2026-12-01 10:02:03)");
});
