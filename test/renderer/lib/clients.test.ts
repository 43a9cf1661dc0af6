// The renderer's client names are proxy-core's: every known client, by the same label.
import { expect, test } from 'vitest';
import { CLIENTS } from '../../../proxy-core/src/clients/known-clients.js';
import { CLIENT_LABELS, clientLabel } from '../../../renderer/src/lib/clients.js';

test('the same table as clients/known-clients.ts', () => {
  expect(CLIENT_LABELS).toEqual(Object.fromEntries(Object.values(CLIENTS).map((c) => [c.id, c.label])));
});

test('a known id by its name; an unknown one as it is, even a name of Object.prototype', () => {
  expect(clientLabel('claude-desktop')).toBe('Claude Desktop');
  expect(clientLabel('my-agent')).toBe('my-agent');
  expect(clientLabel('constructor')).toBe('constructor');
  expect(clientLabel('airlock-undo')).toBe('Airlock (undo)');
});
