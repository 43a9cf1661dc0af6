/**
 * The Activity page's state, run as the app runs it (runes compiled to signals) against a broker played here:
 * pages of history loaded in order and never twice, the calls the stream reports before the first page is in,
 * a filter that is not a query, answers to a superseded reload dropped, what undo can do kept current without a
 * late read undoing what an event said, and the detail of a summary row fetched when it is opened.
 */
import { describe, expect, test } from 'vitest';
import type { BrokerEvent, HistoryItem, HistoryQuery } from '@airlock/proxy-core/protocol/api';
import type { AirlockApi } from '@airlock/proxy-core/protocol/ui-contract';
import type { UndoInfo } from '@airlock/proxy-core/protocol/undo-api';
import { ActivityState, PAGE } from '../../../renderer/src/lib/activity.svelte.js';
import { item, summary } from '../../helpers/activity-rows.js';
const event = (type: string, detail: unknown): BrokerEvent => ({ seq: 1, at: 0, type, server: null, tool: null, detail }) as BrokerEvent;
const ready: UndoInfo = { available: true, kind: 'snapshot', state: 'ready' };
const undone: UndoInfo = { available: false, kind: 'snapshot', state: 'undone', undoneBy: 'u1' };

interface Answer {
  calls: HistoryItem[];
  nextCursor: number | null;
}

/** A broker whose history answers wait until the test releases them, in any order. */
function broker() {
  const asked: { query: HistoryQuery; answer(a: Answer): void; fail(err: Error): void }[] = [];
  const api = {
    call: (method: string, params: unknown) => {
      if (method !== 'history') throw new Error(`unexpected ${method}`);
      return new Promise((answer, fail) => asked.push({ query: params as HistoryQuery, answer, fail }));
    },
    subscribe: () => () => undefined,
    host: { kind: 'browser' },
  } as unknown as AirlockApi;
  /** The oldest question not yet answered. */
  const next = () => {
    const q = asked.shift();
    if (!q) throw new Error('nothing was asked');
    return q;
  };
  return { api, asked, next };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('pages of history', () => {
  test('the first page of summaries, then older ones by cursor, one at a time, until the journal has no more', async () => {
    const b = broker();
    const s = new ActivityState(b.api);
    expect(s.reload()).toBe(true);
    expect(s.loading).toBe(true);
    expect(s.loaded).toBe(false);
    const first = b.next();
    expect(first.query).toEqual({ summary: true, limit: PAGE });
    first.answer({ calls: [item('c3', 3), item('c2', 2)], nextCursor: 2 });
    await settle();
    expect([s.loaded, s.loading, s.count, s.more]).toEqual([true, false, 2, true]);
    expect(s.rowAt(0, s.version)?.id).toBe('c3');

    void s.loadPage(false);
    void s.loadPage(false);
    expect(b.asked).toHaveLength(1);
    const older = b.next();
    expect(older.query).toEqual({ summary: true, limit: PAGE, before: 2 });
    older.answer({ calls: [item('c1', 1)], nextCursor: null });
    await settle();
    expect([s.count, s.more]).toEqual([3, false]);
    void s.loadPage(false);
    expect(b.asked).toHaveLength(0);
  });

  test('a call the stream reports before the first page is in is applied over it: once, and on top when new', async () => {
    const b = broker();
    const s = new ActivityState(b.api);
    s.reload();
    s.onEvent(event('call', summary('c2', { outcome: 'pending' })));
    s.onEvent(event('call', summary('c9')));
    expect(s.count).toBe(0);
    b.next().answer({ calls: [item('c2', 2, { outcome: 'pending' })], nextCursor: null });
    await settle();
    expect([0, 1].map((i) => s.rowAt(i, s.version)?.id)).toEqual(['c9', 'c2']);
    expect(s.count).toBe(2);
    // after the page, a report updates its row where it stands
    s.onEvent(event('call', summary('c2', { outcome: 'ok' })));
    expect(s.count).toBe(2);
    expect(s.list.get('c2')?.outcome).toBe('ok');
  });

  test('a filter that is not a query loads nothing and says why; a reload drops the answer to the one before', async () => {
    const b = broker();
    const s = new ActivityState(b.api);
    s.filter.from = 'nonsense';
    expect(s.reload()).toBe(false);
    expect(s.problem).toBe('the start of the time range is not a date');
    expect(b.asked).toHaveLength(0);

    s.filter.from = '';
    s.filter.tool = 'write_file';
    s.reload();
    const stale = b.next();
    s.filter.tool = 'read_file';
    s.reload();
    expect(s.problem).toBeNull();
    const fresh = b.next();
    expect(fresh.query).toMatchObject({ tool: 'read_file' });
    stale.answer({ calls: [item('old', 1)], nextCursor: null });
    await settle();
    expect([s.loaded, s.loading, s.count]).toEqual([false, true, 0]);
    fresh.answer({ calls: [item('new', 2, { tool: 'read_file' })], nextCursor: null });
    await settle();
    expect([s.loaded, s.count]).toEqual([true, 1]);
  });

  test('a refused page says why', async () => {
    const b = broker();
    const s = new ActivityState(b.api);
    s.reload();
    b.next().fail(Object.assign(new Error('the broker is not running'), { code: 'unavailable' }));
    await settle();
    expect(s.error).toMatch(/the broker is not running/);
    expect(s.loading).toBe(false);
  });

  test('a text search: a new call it may match is counted once, however often it is reported', async () => {
    const b = broker();
    const s = new ActivityState(b.api);
    s.filter.text = 'secret';
    s.reload();
    b.next().answer({ calls: [], nextCursor: null });
    await settle();
    s.onEvent(event('call', summary('c1', { outcome: 'pending' })));
    s.onEvent(event('call', summary('c1')));
    s.onEvent(event('call', summary('c2', { tool: 'secret_tool' })));
    expect(s.mayMatch).toBe(1);
    expect(s.count).toBe(1);
    s.reload();
    expect(s.mayMatch).toBe(0);
  });
});

describe('what undo can do for a row', () => {
  async function loaded(calls: HistoryItem[]) {
    const b = broker();
    const s = new ActivityState(b.api);
    s.reload();
    b.next().answer({ calls, nextCursor: null });
    await settle();
    return { b, s };
  }

  test('an event sets it at once; an undo reads the call again, and the call its undo entry undid', async () => {
    const { b, s } = await loaded([item('u1', 2, { summary: true }), item('c1', 1, { summary: true, undo: ready })]);
    const version = s.version;
    s.onEvent(event('undo-known', { callId: 'c1', undo: undone }));
    expect(s.list.get('c1')?.undo).toEqual(undone);
    expect(s.version).toBeGreaterThan(version);

    s.onEvent(event('undo', { callId: 'u1', undoId: '', ok: true, kind: 'snapshot', summary: '', restored: [], conflicts: [], residue: [] }));
    const again = b.next();
    expect(again.query).toEqual({ id: 'u1', limit: 1, summary: true });
    again.answer({ calls: [item('u1', 2, { summary: true, undo: { available: true, kind: 'snapshot', state: 'ready', undoOf: 'c1' } })], nextCursor: null });
    await settle();
    expect(s.list.get('u1')?.undo?.undoOf).toBe('c1');
    // undoing the undo redoes c1: c1 is read again
    expect(b.next().query).toEqual({ id: 'c1', limit: 1, summary: true });
  });

  test('a read that started before an event does not undo what the event said', async () => {
    const { b, s } = await loaded([item('c1', 1, { summary: true, undo: ready })]);
    s.onEvent(event('undo', { callId: 'c1', undoId: '', ok: true, kind: 'snapshot', summary: '', restored: [], conflicts: [], residue: [] }));
    const late = b.next();
    s.onEvent(event('undo-known', { callId: 'c1', undo: undone }));
    late.answer({ calls: [item('c1', 1, { summary: true, undo: ready })], nextCursor: null });
    await settle();
    expect(s.list.get('c1')?.undo).toEqual(undone);
  });

  test('a rollback reads the open call again; a call not shown is not read', async () => {
    const { b, s } = await loaded([item('c1', 1, { summary: true })]);
    s.onEvent(event('rollback', {}));
    expect(b.asked).toHaveLength(0);
    s.selectedId = 'c1';
    s.onEvent(event('rollback', {}));
    expect(b.next().query).toEqual({ id: 'c1', limit: 1, summary: true });
    s.onEvent(event('undo', { callId: 'elsewhere', undoId: '', ok: true, kind: 'snapshot', summary: '', restored: [], conflicts: [], residue: [] }));
    expect(b.asked).toHaveLength(0);
  });
});

describe('the open row', () => {
  test('a summary row is completed from its journal entry, keeping an undo state an event reported meanwhile', async () => {
    const b = broker();
    const s = new ActivityState(b.api);
    s.reload();
    b.next().answer({ calls: [item('c1', 1, { summary: true, undo: ready })], nextCursor: null });
    await settle();
    s.selectedId = 'c1';
    expect(s.partialId).toBe('c1');
    s.loadDetail(s.partialId);
    expect(s.detailLoading).toBe(true);
    const entry = b.next();
    expect(entry.query).toEqual({ id: 'c1', limit: 1 });
    s.onEvent(event('undo-known', { callId: 'c1', undo: undone }));
    entry.answer({ calls: [item('c1', 1, { arguments: '{"path":"/tmp/full"}', undo: ready })], nextCursor: null });
    await settle();
    expect(s.detailLoading).toBe(false);
    expect(s.selected).toMatchObject({ id: 'c1', partial: false, arguments: '{"path":"/tmp/full"}', undo: undone });
    expect(s.partialId).toBeNull();
    // a full row is not read again
    s.loadDetail('c1');
    expect(b.asked).toHaveLength(0);
  });

  test('a call not in the journal yet, and a refused read, say so', async () => {
    const b = broker();
    const s = new ActivityState(b.api);
    s.reload();
    b.next().answer({ calls: [], nextCursor: null });
    await settle();
    s.onEvent(event('call', summary('c1', { outcome: 'pending' })));
    s.selectedId = 'c1';
    s.loadDetail(s.partialId);
    b.next().answer({ calls: [], nextCursor: null });
    await settle();
    expect(s.detailError).toBe('This call is not in the journal yet: it may still be running.');
    s.loadDetail(s.partialId);
    b.next().fail(Object.assign(new Error('gone'), { code: 'not-found' }));
    await settle();
    expect([s.detailLoading, s.detailError]).toEqual([false, 'gone.']);
    expect(s.toolOf('c1')).toBe('write_file');
    expect(s.toolOf('nope')).toBeUndefined();
  });
});
