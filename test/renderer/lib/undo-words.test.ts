import { expect, test } from 'vitest';
import * as core from '../../../proxy-core/src/protocol/activity.js';
import { isUndoEntry, UNDO_WORDS, undoWord } from '../../../renderer/src/lib/undo-words.js';
import { item } from '../../helpers/activity-rows.js';

test("the row's undo words are the CLI's and the export's, case by case", () => {
  const cases = [
    item('a', 1, { undo: { available: true, kind: 'snapshot', state: 'ready' } }),
    item('b', 2, { undo: { available: false, kind: 'snapshot', state: 'undone' } }),
    item('c', 3, { class: 'read-only-trusted', undo: { available: false, kind: null } }),
    item('d', 4, { class: 'read-only-unchecked', undo: { available: false, kind: null } }),
    item('e', 5, { undo: { available: false, kind: 'snapshot', state: 'unchanged' } }),
    item('f', 6, { undo: { available: false, kind: null } }),
    item('g', 7, { decision: 'deny', outcome: 'not-run' }),
    item('h', 8, { outcome: 'pending', undo: { available: false, kind: null } }),
    item('i', 9, {}),
    item('j', 10, { client: 'airlock-undo', undo: { available: true, kind: 'snapshot', undoOf: 'a' } }),
  ];
  const words = cases.map((c) => undoWord(c));
  expect(words).toEqual(cases.map((c) => core.undoWord(c)));
  expect(words).toEqual(['undoable', 'undone', 'nothing-to-undo', 'nothing-to-undo', 'nothing-to-undo', 'cannot-undo', 'not-run', 'unknown', 'unknown', 'undoable']);
  expect(UNDO_WORDS).toEqual(core.UNDO_WORDS);
  expect(cases.map(isUndoEntry)).toEqual(cases.map((c) => core.isUndoEntry(c)));
  expect(isUndoEntry(cases[9]!)).toBe(true);
});
