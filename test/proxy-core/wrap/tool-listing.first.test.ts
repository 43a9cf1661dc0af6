/**
 * The wrapper's own first listing goes behind the client's first tools/list: the server is asked the client's
 * question first and the client's answer is written without waiting for the wrapper's listing to be read. A
 * client that does not list within the grace, or a call that needs the catalog, starts the wrapper's at once
 * where the call is concerned; either way a call is decided on the wrapper's own listing, never on the page alone.
 */
import { expect, test, vi } from 'vitest';
import { FIRST_LISTING_GRACE_MS } from '../../../proxy-core/src/wrap/tool-listing.js';
import { Harness, settle, TOOLS } from '../../helpers/relay-harness.js';

type Msg = Record<string, unknown>;

const own = (m: Msg) => m.method === 'tools/list' && typeof m.id === 'string' && m.id.startsWith('airlock-internal:');


test("the client's first tools/list reaches the server before the wrapper's own, and is answered before that one is", async () => {
  const h = new Harness({ policy: { rules: [] } });
  h.autoList = false;
  h.handshake();
  await settle();
  // nothing of the wrapper's own yet: the client may be about to list
  expect(h.toUpstream.filter(own)).toHaveLength(0);
  h.client({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
  await settle();
  const methods = h.toUpstream.filter((m) => m.method === 'tools/list').map((m) => (own(m) ? 'own' : m.id));
  expect(methods).toEqual([7, 'own']);
  // the server answers in order: the client's first, annotated, before the wrapper's listing is in
  h.server({ jsonrpc: '2.0', id: 7, result: { tools: TOOLS } });
  const answer = h.answer(7).result as { tools: { name: string; annotations: Msg }[] };
  expect(answer.tools.map((t) => t.name)).toEqual(['echo', 'write_note', 'delete_all']);
  // a server's read-only claim is not passed on as a hint the client auto-approves on
  expect(answer.tools.find((t) => t.name === 'echo')!.annotations.readOnlyHint).toBe(false);
  // a call right behind waits for the wrapper's own listing, then is decided on it
  h.call(8, 'delete_all');
  await settle();
  expect(h.forwardedCalls()).toHaveLength(0);
  h.answerListings();
  await settle();
  // a destructive tool: held for a human yes, not forwarded
  expect(h.link.asked.map((a) => a.tool)).toEqual(['delete_all']);
  expect(h.forwardedCalls()).toHaveLength(0);
});

test('a client that does not list: the wrapper lists once the grace is over, not before', async () => {
  const h = new Harness({ policy: { rules: [] } });
  h.handshake();
  await h.advance(FIRST_LISTING_GRACE_MS - 1);
  expect(h.toUpstream.filter(own)).toHaveLength(0);
  await h.advance(1);
  expect(h.toUpstream.filter(own)).toHaveLength(1);
  // and only once (the timer is spent)
  await h.advance(10 * FIRST_LISTING_GRACE_MS);
  expect(h.toUpstream.filter(own)).toHaveLength(1);
});

test('a call before any listing asks for the wrapper\'s at once, and the grace adds no second one', async () => {
  const h = new Harness({ policy: { rules: [{ id: 'r1', action: 'allow', server: 'fx', tool: 'echo', createdAt: 0 }] } });
  h.handshake();
  h.call(1, 'echo', { message: 'hi' });
  await settle();
  expect(h.toUpstream.filter(own)).toHaveLength(1);
  expect(h.forwardedCalls()).toHaveLength(1);
  await h.advance(10 * FIRST_LISTING_GRACE_MS);
  expect(h.toUpstream.filter(own)).toHaveLength(1);
});

test("a server that calls a tool read-only on the client's first page and destructive to the wrapper: the call is held, never sent", async () => {
  // the user trusts this server's read-only hints: the client's page alone would let the call run unasked
  const h = new Harness({ policy: { rules: [], trustReadOnlyHints: true } });
  await h.clientListsFirst([{ name: 'wipe', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }]);
  // the client was answered before the wrapper's own listing came in
  expect(h.answers(7)).toHaveLength(1);
  // the client's call goes right behind; the wrapper's own listing says something else
  h.call(8, 'wipe');
  await settle();
  const ownId = h.heldListings.shift()!;
  h.server({ jsonrpc: '2.0', id: ownId, result: { tools: [{ name: 'wipe', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } }] } });
  await settle();
  // judged by the strictest declaration seen: a human is asked, and the server was sent no call
  expect(h.link.asked.map((a) => a.tool)).toEqual(['wipe']);
  expect(h.forwardedCalls()).toHaveLength(0);
});

test("the wrapper's own listing answered with the very bytes of the client's page is taken from that page, not read a second time", async () => {
  const h = new Harness({ policy: { rules: [{ id: 'r1', action: 'allow', server: 'fx', tool: 'write_note', createdAt: 0 }] } });
  await h.clientListsFirst(TOOLS);
  h.call(8, 'write_note');
  h.call(9, 'delete_all');
  await settle();
  expect(h.forwardedCalls()).toHaveLength(0);
  // what the server wrote to the wrapper: the page's bytes after another id, not parsed again
  const parse = vi.spyOn(JSON, 'parse');
  try {
    h.answerListings();
    expect(parse.mock.calls.filter(([text]) => String(text).includes('delete_all'))).toEqual([]);
  } finally {
    parse.mockRestore();
  }
  await settle();
  // decided on the wrapper's own listing all the same: the rule lets one through, the destructive one asks
  expect(h.forwardedCalls().map((m) => (m.params as Msg).name)).toEqual(['write_note']);
  expect(h.link.asked.map((a) => a.tool)).toEqual(['delete_all']);
});

test("an own listing that differs from the client's page by one byte is read as every line is, and decides", async () => {
  // the user trusts read-only hints: on the client's page alone, echo would run unasked
  const h = new Harness({ policy: { rules: [], trustReadOnlyHints: true } });
  await h.clientListsFirst(TOOLS);
  h.call(8, 'echo');
  await settle();
  const ownId = h.heldListings.shift()!;
  // the same page to the wrapper, but echo no longer read-only: a few bytes apart
  const changed = TOOLS.map((t) => (t.name === 'echo' ? { ...t, annotations: { readOnlyHint: false } } : t));
  const parse = vi.spyOn(JSON, 'parse');
  try {
    h.server({ jsonrpc: '2.0', id: ownId, result: { tools: changed } });
    expect(parse.mock.calls.filter(([text]) => String(text).includes(ownId)).length).toBeGreaterThan(0);
  } finally {
    parse.mockRestore();
  }
  await settle();
  // judged by what the wrapper's own listing said: a human is asked, and the server was sent no call
  expect(h.link.asked.map((a) => a.tool)).toEqual(['echo']);
  expect(h.forwardedCalls()).toHaveLength(0);
});
