/** The window's live state: a load reconciled with the events that arrived while it loaded, then events one by one. */
import { describe, expect, test } from 'vitest';
import type { BrokerEvent, BrokerStatus, SessionInfo, Ticket } from '@airlock/proxy-core/protocol/api';
import { applyEvent, dismissNotice, emptySnapshot, reconcile, windowTitle } from '../../../renderer/src/lib/live.js';

const ticket = (id: string, createdAt: number, over: Partial<Ticket> = {}): Ticket => ({
  id,
  sessionId: 's1',
  client: 'cursor',
  server: 'fs',
  tool: 'write_file',
  arguments: { path: '/tmp/x' },
  argsTruncated: false,
  argsBytes: 17,
  argsSha256: 'a'.repeat(64),
  class: 'destructive',
  reasons: ['no annotations'],
  createdAt,
  ...over,
});
const session = (id: string, server = 'fs'): SessionInfo => ({ id, client: 'cursor', server, command: ['node'], pid: 1, since: 0 });
const status = (over: Partial<BrokerStatus> = {}): BrokerStatus => ({ estop: false, pending: 0, sessions: [], dataDir: '/d', pid: 1, ticketTimeoutSeconds: 120, ...over });
let seq = 100;
const ev = (type: string, detail: unknown, s = ++seq): BrokerEvent => ({ seq: s, at: 1000 + s, type, server: null, tool: null, detail });

describe('reconcile', () => {
  test('pending newest first; events held during the load applied on top, idempotently', () => {
    const a = ticket('a', 1);
    const b = ticket('b', 2);
    const c = ticket('c', 3);
    // b was created after the head and is already in the load; c arrived only as an event; a ended meanwhile
    const s = reconcile(status(), [a, b], [ev('ticket-created', { ticket: b }), ev('ticket-created', { ticket: c }), ev('ticket-ended', { ticketId: 'a', resolution: 'timeout', reason: 'nobody answered', remember: null })], 100);
    expect(s.tickets.map((t) => t.id)).toEqual(['c', 'b']);
    expect(s.ended.a).toMatchObject({ resolution: 'timeout', reason: 'nobody answered' });
  });

  test('a ticket that ended before the load returned stays gone even when its creation is applied after', () => {
    const x = ticket('x', 5);
    const s = reconcile(status(), [], [ev('ticket-created', { ticket: x }), ev('ticket-ended', { ticketId: 'x', resolution: 'denied', reason: null, remember: null })], 100);
    expect(s.tickets).toEqual([]);
    // and a late duplicate of its creation does not bring it back
    expect(applyEvent(s, ev('ticket-created', { ticket: x })).tickets).toEqual([]);
  });

  test('the last E-Stop event wins over the loaded state', () => {
    expect(reconcile(status({ estop: false }), [], [ev('estop-on', {})], 100).estop).toBe(true);
    expect(reconcile(status({ estop: true }), [], [ev('estop-on', {}), ev('estop-off', {})], 100).estop).toBe(false);
    expect(reconcile(status({ estop: true }), [], [], 100).estop).toBe(true);
  });

  test('sessions: up once, down removes', () => {
    const s1 = session('s1');
    const s = reconcile(status({ sessions: [s1] }), [], [ev('session-up', { session: s1 }), ev('session-up', { session: session('s2', 'mail') }), ev('session-down', { sessionId: 's1', client: 'cursor' })], 100);
    expect(s.sessions.map((x) => x.id)).toEqual(['s2']);
  });
});

describe('applyEvent', () => {
  test('events at or before the snapshot seq change nothing', () => {
    const s = { ...emptySnapshot(), seq: 50 };
    expect(applyEvent(s, ev('estop-on', {}, 50))).toBe(s);
    expect(applyEvent(s, ev('estop-on', {}, 51)).estop).toBe(true);
  });

  test('a new ticket goes on top; an ended one leaves at once, whoever ended it', () => {
    let s = emptySnapshot();
    s = applyEvent(s, ev('ticket-created', { ticket: ticket('old', 1) }));
    s = applyEvent(s, ev('ticket-created', { ticket: ticket('new', 2) }));
    expect(s.tickets.map((t) => t.id)).toEqual(['new', 'old']);
    s = applyEvent(s, ev('ticket-ended', { ticketId: 'old', resolution: 'cancelled', reason: 'the client cancelled the call', remember: null }));
    expect(s.tickets.map((t) => t.id)).toEqual(['new']);
    expect(s.ended.old?.resolution).toBe('cancelled');
  });

  test('a server added unprotected makes a notice; protecting it (or dismissing) removes it', () => {
    let s = emptySnapshot();
    s = applyEvent(s, ev('server-added', { client: 'cursor', server: 'mail', path: '/home/me/.cursor/mcp.json', protected: false }));
    s = applyEvent(s, ev('server-added', { client: 'cursor', server: 'mail', protected: false }));
    s = applyEvent(s, ev('server-added', { client: 'cursor', server: 'safe', protected: true }));
    expect(s.notices.map((n) => n.server)).toEqual(['mail']);
    expect(applyEvent(s, ev('server-protected', { client: 'cursor', server: 'mail' })).notices).toEqual([]);
    expect(dismissNotice(s, 'cursor', 'mail').notices).toEqual([]);
  });

  test('unknown events and malformed details are ignored', () => {
    const s = emptySnapshot();
    expect(applyEvent(s, ev('something-new', { x: 1 })).tickets).toEqual([]);
    expect(applyEvent(s, ev('ticket-created', null)).tickets).toEqual([]);
    expect(applyEvent(s, ev('ticket-ended', {})).ended).toEqual({});
  });

  test('the ended list keeps the last 200', () => {
    let s = emptySnapshot();
    for (let i = 0; i < 250; i++) s = applyEvent(s, ev('ticket-ended', { ticketId: `t${i}`, resolution: 'denied', reason: null, remember: null }));
    expect(Object.keys(s.ended)).toHaveLength(200);
    expect(s.ended.t249).toBeDefined();
    expect(s.ended.t0).toBeUndefined();
  });
});

test('window title carries the pending count', () => {
  expect(windowTitle(0)).toBe('Airlock');
  expect(windowTitle(2)).toBe('(2) Airlock');
});

test('a held call its client stopped waiting on stays, marked with when', () => {
  const s = applyEvent(emptySnapshot(), ev('ticket-created', { ticket: ticket('u', 1) }));
  const after = applyEvent(s, ev('ticket-unwaited', { ticketId: 'u', at: 4242 }));
  expect(after.tickets).toEqual([{ ...ticket('u', 1), unwaitedAt: 4242 }]);
  expect(applyEvent(after, ev('ticket-unwaited', { ticketId: 'other', at: 1 })).tickets).toEqual(after.tickets);
});
