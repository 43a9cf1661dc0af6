/**
 * The wrapper's own listing requests: the client's page is held only while one of them is out, and taken for
 * an answer only with its very bytes after that answer's id.
 */
import { describe, expect, test } from 'vitest';
import { OwnListing } from '../../../proxy-core/src/wrap/own-listing.js';
import { PageBytes } from '../../../proxy-core/src/wrap/page-bytes.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const TOOLS = [{ name: 'echo', inputSchema: { type: 'object' } }];
const line = (id: unknown, tools: unknown[] = TOOLS) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result: { tools } }));
const clientPage = (id = 7) => {
  const raw = line(id);
  return { page: PageBytes.of(id, raw)!, message: JSON.parse(raw.toString()) as Record<string, unknown> };
};

function own() {
  const sent: { id: string }[] = [];
  const o = new OwnListing(new FakeClock(), (m) => sent.push(m as { id: string }));
  return { o, sent };
}

describe("the wrapper's own listing", () => {
  test('an answer with the held page bytes after its id resolves the listing with the texts held, unread', async () => {
    const { o, sent } = own();
    const listing = o.listAll();
    const { page, message } = clientPage();
    o.hold(page, message, ['{"name":"echo"}']);
    const taken = o.takeHeld(line(sent[0]!.id));
    expect(taken?.id).toBe(sent[0]!.id);
    const read = await listing;
    expect(read.tools).toBe((message.result as { tools: unknown[] }).tools);
    expect(read.texts).toEqual(['{"name":"echo"}']);
    expect(read.page?.message.id).toBe(sent[0]!.id);
  });

  test('nothing is held while no request of ours is out, nor after release, nor matched for another id or other bytes', async () => {
    const { o, sent } = own();
    const { page, message } = clientPage();
    o.hold(page, message, []);
    expect(o.takeHeld(line('airlock-internal:x:1'))).toBeUndefined();
    const listing = o.listAll();
    const id = sent[0]!.id;
    o.hold(page, message, []);
    // an id we never sent, and our id with a page one entry longer
    expect(o.takeHeld(line(`${id}0`))).toBeUndefined();
    expect(o.takeHeld(line(id, [...TOOLS, { name: 'more' }]))).toBeUndefined();
    o.release();
    expect(o.takeHeld(line(id))).toBeUndefined();
    // read the usual way, it still answers
    o.take(JSON.parse(line(id).toString()), line(id));
    expect((await listing).tools).toEqual(TOOLS);
    expect((await listing).texts).toBeUndefined();
  });

  test('abandon fails what is out and lets the page go', async () => {
    const { o, sent } = own();
    const listing = o.listAll();
    const { page, message } = clientPage();
    o.hold(page, message, []);
    o.abandon();
    await expect(listing).rejects.toThrow('server exited');
    expect(o.takeHeld(line(sent[0]!.id))).toBeUndefined();
  });
});
