import { expect, test } from 'vitest';
import { leaseLine, NO_APP_PROOFS, withPresence } from '../../electron/src/presence-text.js';

test('the lease line counts whole minutes left, and is gone when the lease is', () => {
  const now = 1_000_000;
  expect(leaseLine(now + 4 * 60_000 + 1, now)).toBe('Approvals hold for 5 more minutes (until the screen locks)');
  expect(leaseLine(now + 4 * 60_000, now)).toBe('Approvals hold for 4 more minutes (until the screen locks)');
  expect(leaseLine(now + 30_000, now)).toBe('Approvals hold for 1 more minute (until the screen locks)');
  expect(leaseLine(now, now)).toBeNull();
  expect(leaseLine(now - 1, now)).toBeNull();
});

test('the tooltip carries the standing warning under what it says; without one it is unchanged', () => {
  expect(withPresence('Airlock: watching your MCP servers', null)).toBe('Airlock: watching your MCP servers');
  expect(withPresence('Airlock: watching your MCP servers', 'Presence proofs are off.')).toBe('Airlock: watching your MCP servers\nWARNING: Presence proofs are off.');
  expect(NO_APP_PROOFS).toMatch(/browser UI with your passkey.*`airlock approve` in a terminal/);
});
