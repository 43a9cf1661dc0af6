import { expect, test } from 'vitest';
import { callRecord } from '../../../helpers/records.js';
import { tempStores } from '../../../helpers/temp-store.js';

const { open } = tempStores('al-sessions-');

test('sessions by id or newest first (of one client), and the journal filtered by session, with summaries', () => {
  const store = open();
  const at = (n: number) => ({ command: ['node', 's.js'], pid: 1, since: n });
  store.openSession({ id: 's1', client: 'cursor', server: 'fs', ...at(100) });
  store.openSession({ id: 's2', client: 'claude-desktop', server: 'fs', ...at(200) });
  store.openSession({ id: 's3', client: 'cursor', server: 'mail', ...at(300) });
  store.endSession('s1');
  expect(store.sessions.list({ limit: 2 }).map((s) => s.id)).toEqual(['s3', 's2']);
  expect(store.sessions.list({ client: 'cursor', limit: 10 }).map((s) => s.id)).toEqual(['s3', 's1']);
  const [s1] = store.sessions.list({ id: 's1', limit: 1 });
  expect(s1).toMatchObject({ id: 's1', client: 'cursor', server: 'fs', startedAt: 100 });
  expect(typeof s1!.endedAt).toBe('number');
  expect(store.sessions.list({ id: 's2', limit: 1 })[0]!.endedAt).toBeNull();
  expect(store.sessions.list({ id: 'nope', limit: 1 })).toEqual([]);

  store.writeJournal([
    callRecord({ id: 'a', sessionId: 's1', arguments: '{"path":"/a.md","content":"x"}', startedAt: 110 }),
    callRecord({ id: 'b', sessionId: 's2', arguments: '{"path":"/b.md"}', startedAt: 210 }),
    callRecord({ id: 'c', sessionId: 's1', arguments: '{"path":"/c.md"}', startedAt: 120 }),
  ]);
  const seen: string[] = [];
  const page = store.history({ session: 's1', summary: true }, (c, args) => (seen.push(args), `summary of ${c.id}`));
  expect(page.calls.map((c) => [c.id, c.argSummary, c.arguments])).toEqual([
    ['c', 'summary of c', ''],
    ['a', 'summary of a', ''],
  ]);
  // a summary row leaves the arguments out but reads their head for the summary
  expect(seen).toEqual(['{"path":"/c.md"}', '{"path":"/a.md","content":"x"}']);
  expect(store.history({ session: 'never' }).calls).toEqual([]);
  store.close();
});
