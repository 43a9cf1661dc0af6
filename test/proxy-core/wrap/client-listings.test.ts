/**
 * The client's listings in flight: what waits for none to be out runs once the last is answered, or once the
 * server has left them unanswered past their timeout; a flood past the cap is not waited on.
 */
import { expect, test } from 'vitest';
import { ClientListings } from '../../../proxy-core/src/wrap/client-listings.js';
import { FakeClock } from '../../helpers/fake-clock.js';

test('what waits runs when the last listing is answered, not before; at once when none is out', () => {
  const clock = new FakeClock();
  const l = new ClientListings(clock, 1000, () => {});
  const ran: string[] = [];
  l.whenNoneOut(() => ran.push('none out'));
  expect(ran).toEqual(['none out']);
  l.sent('1');
  l.sent('2');
  l.whenNoneOut(() => ran.push('after both'));
  expect(l.forget('1')).toBe(true);
  l.settle();
  expect(ran).toEqual(['none out']);
  expect(l.forget('1')).toBe(false);
  expect(l.forget('2')).toBe(true);
  l.settle();
  expect(ran).toEqual(['none out', 'after both']);
  expect(l.anyOut()).toBe(false);
});

test('a listing left unanswered stops counting at its timeout, and says so first', () => {
  const clock = new FakeClock();
  const events: string[] = [];
  const l = new ClientListings(clock, 1000, () => events.push(`lapsed, out: ${l.anyOut()}`));
  l.sent('1');
  l.whenNoneOut(() => events.push('went on'));
  clock.advance(999);
  expect(l.anyOut()).toBe(true);
  expect(events).toEqual([]);
  clock.advance(1);
  expect(events).toEqual(['lapsed, out: false', 'went on']);
});

test('past 64 at once, the rest are not waited on', () => {
  const l = new ClientListings(new FakeClock(), 1000, () => {});
  for (let i = 0; i < 64; i++) l.sent(String(i));
  l.sent('64');
  expect(l.forget('64')).toBe(false);
  for (let i = 0; i < 64; i++) l.forget(String(i));
  expect(l.anyOut()).toBe(false);
});
