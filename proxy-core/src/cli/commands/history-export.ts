/**
 * `airlock history --export jsonl|csv`: every journal entry the filters give, written as it is read, one page at a
 * time (EXPORT_PAGE entries: 100,000 entries are never held at once), waiting for stdout to drain between pages;
 * and `airlock history --story SESSION`: one wrapper session told in order, in sentences.
 */
import type { HistoryItem, HistoryQuery } from '../../protocol/api.js';
import { sessionTitle, storySentence } from '../../protocol/activity.js';
import { EXPORT_PAGE, exportEntry, exportHead, type ExportFormat } from '../../protocol/activity-export.js';
import { spellOutHidden } from '../../classify/hidden-text.js';
import { IpcError } from '../../ipc/channel.js';
import { call, connect, print, printJson } from '../control.js';
import { CliError } from '../errors.js';

/** The most calls a story tells (the newest of a longer session; it says so). */
const STORY_MAX = 10_000;

export async function exportHistory(format: ExportFormat, query: HistoryQuery): Promise<number> {
  const out = process.stdout;
  // a terminal would act on what an agent put in the text; a file or a pipe gets the bytes as they are
  const shown = (text: string) => (out.isTTY ? spellOutHidden(text) : text);
  let closed = false;
  out.on('error', () => (closed = true));
  const write = (text: string) =>
    new Promise<void>((resolve) => {
      if (closed || text === '') return resolve();
      if (out.write(shown(text))) resolve();
      else out.once('drain', resolve);
    });
  const client = await connect();
  try {
    await write(exportHead(format));
    let before = query.before;
    while (!closed) {
      const page = await client.call('history', { ...query, summary: true, limit: EXPORT_PAGE, ...(before !== undefined ? { before } : {}) });
      let text = '';
      for (const c of page.calls) text += exportEntry(format, c);
      await write(text);
      if (page.nextCursor === null) break;
      before = page.nextCursor;
    }
  } catch (err) {
    throw new CliError(err instanceof IpcError ? err.message : String(err));
  } finally {
    client.close();
  }
  return 0;
}

export async function printStory(sessionId: string, json: boolean): Promise<number> {
  const { sessions } = await call('sessions.list', { id: sessionId });
  const session = sessions[0];
  if (!session) throw new CliError(`no session ${sessionId} (see the SESSION column of \`airlock history --export jsonl\`)`);
  const calls: HistoryItem[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await call('history', { session: sessionId, summary: true, limit: Math.min(EXPORT_PAGE, STORY_MAX - calls.length), ...(before !== undefined ? { before } : {}) });
    calls.push(...page.calls);
    if (page.nextCursor === null || calls.length >= STORY_MAX) {
      before = page.nextCursor ?? undefined;
      break;
    }
    before = page.nextCursor;
  }
  calls.reverse();
  if (json) {
    printJson({ session, calls: calls.map((c) => ({ id: c.id, startedAt: c.startedAt, sentence: storySentence(c) })) });
    return 0;
  }
  const ended = session.endedAt === null ? 'still connected' : `ended ${new Date(session.endedAt).toISOString()}`;
  print(`${sessionTitle(session)}: session ${session.id}, started ${new Date(session.startedAt).toISOString()}, ${ended}`);
  if (before !== undefined) print(`(the newest ${STORY_MAX} calls; older ones: airlock history --session ${session.id} --before ${before})`);
  if (calls.length === 0) print('No calls.');
  for (const c of calls) print(`${new Date(c.startedAt).toISOString().slice(11, 19)}  ${storySentence(c)}`);
  return 0;
}
