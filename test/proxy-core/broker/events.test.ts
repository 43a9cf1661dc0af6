/**
 * The event bus (events.ts): a reader that cannot be sent an event (one whose detail JSON.stringify cannot walk)
 * is passed that event and gets the rest; the throw never leaves the bus, whose catching up runs in turns of its
 * own, where it would end the broker.
 */
import { expect, test } from 'vitest';
import { EventBus } from '../../../proxy-core/src/broker/events.js';
import type { BrokerEvent } from '../../../proxy-core/src/protocol/api.js';

const event = (seq: number, detail: unknown) => ({ seq, at: seq, type: 'note', server: null, tool: null, detail }) as unknown as BrokerEvent;

test('an event that cannot be written to a reader is passed over, in catching up and live', async () => {
  const deep = JSON.parse('['.repeat(20_000) + ']'.repeat(20_000)) as unknown;
  const stored = [event(1, 'a'), event(2, deep), event(3, 'c')];
  const bus = new EventBus({ eventsSince: (since: number) => stored.filter((e) => e.seq > since) });
  const got: number[] = [];
  const ended: string[] = [];
  // as the UI host's reader does: the event as JSON text
  bus.subscribe(0, { send: (e) => (JSON.stringify(e), got.push(e.seq), true), ended: (reason) => ended.push(reason) });
  await new Promise((r) => setImmediate(r));
  expect(got).toEqual([1, 3]);
  bus.publish([event(4, deep), event(5, 'e')]);
  expect(got).toEqual([1, 3, 5]);
  expect(ended).toEqual([]);
});
