import { expect, test } from 'vitest';
import { InFlight, type Responder } from '../../../proxy-core/src/wrap/in-flight.js';

const responder = (method: string): Responder => ({ method, answered: () => {} });

test('whether a tools/list answer is owed follows every way an entry enters and leaves the table', () => {
  const t = new InFlight();
  const list = responder('tools/list');
  expect(t.awaitsListing).toBe(false);
  t.expect('"a"', responder('tools/call'));
  expect(t.awaitsListing).toBe(false);
  t.expect('"l1"', list);
  t.expect('"l2"', responder('tools/list'));
  expect(t.take('"l2"')?.method).toBe('tools/list');
  expect(t.awaitsListing).toBe(true);
  // forgetting for another responder leaves the entry (and the count) as it was
  t.forget('"l1"', responder('tools/list'));
  expect(t.awaitsListing).toBe(true);
  t.forget('"l1"', list);
  expect(t.awaitsListing).toBe(false);
  // an entry replaced under the same key counts as what replaced it
  t.expect('"x"', responder('tools/list'));
  t.expect('"x"', responder('ping'));
  expect(t.awaitsListing).toBe(false);
  t.expect('"y"', responder('tools/list'));
  t.drain((r) => r.method === 'tools/list');
  expect(t.awaitsListing).toBe(false);
  expect(t.has('"a"')).toBe(true);
});

test('whether an answer to a method is owed at all: while an entry of it is in the table, and no longer', () => {
  const t = new InFlight();
  expect(t.awaits('resources/read')).toBe(false);
  t.expect('"r"', responder('resources/read'));
  t.expect('"c"', responder('tools/call'));
  expect(t.awaits('resources/read')).toBe(true);
  expect(t.awaits('prompts/get')).toBe(false);
  t.take('"r"');
  expect(t.awaits('resources/read')).toBe(false);
  expect(t.awaits('tools/call')).toBe(true);
});
