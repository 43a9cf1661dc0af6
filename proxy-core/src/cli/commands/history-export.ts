/**
 * `airlock history --export jsonl|csv`: every journal entry the filters give, as the broker formats it
 * (`history.export`, the same text the UI downloads), written page by page (2,000 entries: 100,000 are never
 * held at once), waiting for stdout to drain between pages; and `airlock history --story SESSION`: one wrapper
 * session told in order, in the broker's sentences (`sessions.story`).
 */
import type { HistoryQuery } from '../../protocol/api.js';
import type { ExportFormat } from '../../protocol/activity-export.js';
import { spellOutHidden } from '../../classify/hidden-text.js';
import { IpcError } from '../../ipc/channel.js';
import { call, connect, print, printJson } from '../control.js';
import { CliError } from '../errors.js';

export async function exportHistory(format: ExportFormat, query: Omit<HistoryQuery, 'limit' | 'summary' | 'id'>): Promise<number> {
  const out = process.stdout;
  // a terminal would act on what an agent put in the text; a file or a pipe gets the bytes as they are
  const shown = (text: string) => (out.isTTY ? spellOutHidden(text) : text);
  let closed = false;
  // a reader that left early (`| head`): stop asking for pages, end quietly
  out.on('error', () => (closed = true));
  const write = (text: string) =>
    new Promise<void>((resolve) => {
      if (closed || text === '') return resolve();
      if (out.write(shown(text))) resolve();
      else out.once('drain', resolve);
    });
  const client = await connect();
  try {
    let before = query.before;
    for (let first = true; !closed; first = false) {
      const page = await client.call('history.export', { ...query, format, first, ...(before !== undefined ? { before } : {}) });
      await write(page.text);
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
  const story = await call('sessions.story', { id: sessionId });
  if (json) {
    printJson(story);
    return 0;
  }
  const s = story.session;
  const ended = s.endedAt === null ? 'still connected' : `ended ${new Date(s.endedAt).toISOString()}`;
  print(`${s.title}: session ${s.id}, started ${new Date(s.startedAt).toISOString()}, ${ended}`);
  if (story.cut) print(`(the newest ${story.lines.length} calls; older ones: airlock history --session ${s.id})`);
  if (story.lines.length === 0) print('No calls.');
  for (const l of story.lines) print(`${new Date(l.startedAt).toISOString().slice(11, 19)}  ${l.sentence}`);
  return 0;
}
