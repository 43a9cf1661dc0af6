/** What a file undo says it did: one clause per kind of action, each counted. */
import { expect, test } from 'vitest';
import { restoredInWords } from '../../../../proxy-core/src/broker/undo/run.js';

test.each([
  [[], 'nothing needed putting back'],
  [[{ action: 'already-as-before' }], 'nothing needed putting back'],
  [[{ action: 'restored' }], 'put back 1 file as it was before the call'],
  [[{ action: 'restored' }, { action: 'restored' }], 'put back 2 files as they were before the call'],
  [[{ action: 'removed' }], 'removed 1 file the call created'],
  [[{ action: 'restored' }, { action: 'removed' }, { action: 'recreated' }], 'put back 1 file as it was before the call and removed 1 file the call created and recreated 1 folder the call removed'],
])('%j: %s', (restored, words) => {
  expect(restoredInWords(restored)).toBe(words);
});
