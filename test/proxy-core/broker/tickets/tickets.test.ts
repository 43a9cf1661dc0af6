// A held call's ticket as a card reads it: the tool's own description from its listing, and when its client
// stopped waiting (its wrapper answered "call again"), said once while the ticket stays open for the call made again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import { Tickets } from '../../../../proxy-core/src/broker/tickets/tickets.js';
import type { Session } from '../../../../proxy-core/src/broker/sessions.js';
import { FakeClock } from '../../../helpers/fake-clock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test('description and "stopped waiting" on the ticket; the ticket stays open', () => {
  const dir = mkdtempSync(join(tmpdir(), 'al-tickets-'));
  dirs.push(dir);
  const store = new Store(join(dir, 'airlock.db'));
  const clock = new FakeClock();
  const events: { type: string; detail: unknown }[] = [];
  const tickets = new Tickets({
    store,
    clock,
    timeoutSeconds: () => 120,
    description: (_s, tool) => (tool === 'write' ? 'Writes a note.\u202E' : undefined),
    record: (type, _server, _tool, detail) => void events.push({ type, detail }),
  });
  const session = { info: { id: 's1', client: 'cursor', server: 'fs', command: ['x'], pid: 1, since: 0 }, channel: { notify: () => {} } } as unknown as Session;
  void tickets.ask(session, { callId: 'c1', tool: 'write', arguments: {}, class: 'mutating', reasons: [] });
  const [t] = tickets.pending();
  expect(t!.description).toBe('Writes a note.\u202E');
  clock.advance(55_000);
  tickets.keep(session, 'c1');
  tickets.keep(session, 'c1');
  expect(tickets.pending()[0]!.unwaitedAt).toBe(clock.now());
  expect(events.filter((e) => e.type === 'ticket-unwaited')).toEqual([{ type: 'ticket-unwaited', detail: { ticketId: t!.id, at: clock.now() } }]);
  expect(tickets.has(t!.id)).toBe(true);
  tickets.denyAll(() => true, 'cancelled', 'done', 'cancelled');
  store.close();
});
