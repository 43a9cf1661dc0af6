import { expect, test } from 'vitest';
import { undoPreview } from '../../../renderer/src/lib/undo-preview.js';

test('the preview names the files a snapshot puts back, or the inverse Airlock calls', () => {
  expect(undoPreview({ available: true, kind: 'snapshot', paths: ['/a', '/b'] }, false)).toMatchObject({ headline: 'Airlock will put these 2 files back as they were before the call:', items: ['/a', '/b'] });
  expect(undoPreview({ available: true, kind: 'snapshot', paths: ['/a'] }, false).headline).toBe('Airlock will put this file back as it was before the call:');
  expect(undoPreview({ available: true, kind: 'inverse', inverse: 'delete_entities' }, false)).toMatchObject({ headline: expect.stringContaining('delete_entities'), items: [] });
  expect(undoPreview({ available: true, kind: 'snapshot', paths: ['/a'], undoOf: 'c1' }, true).headline).toMatch(/redoes the call/);
});
