/**
 * The wrapper's warm-up (run while its server starts) takes the paths a plain listing takes: its sample is read
 * for hidden text and found clean, classified, and annotated, so the patterns and functions a client's first
 * listing needs are compiled by then. It keeps nothing: a second run gives the same.
 */
import { expect, test } from 'vitest';
import { classifyTool } from '../../../proxy-core/src/classify/classify.js';
import { warmListingPath } from '../../../proxy-core/src/wrap/warm-up.js';

test('the warm-up classifies a clean sample as a listing would, and keeps nothing between runs', () => {
  const { verdicts, asAWhole } = warmListingPath();
  // the client's first page is answered as a whole: the warm-up's page goes that way too
  expect(asAWhole).toBe(true);
  expect(verdicts.map((v) => [v.name, v.class])).toEqual([
    ['read_note', 'read-only-unchecked'],
    ['delete_note', 'destructive'],
  ]);
  // nothing in the sample is hidden text: the cheap pass (the one almost every real entry takes) is what runs
  for (const v of verdicts) expect(v.reasons.join(' ')).not.toMatch(/hidden|instruction|invisible/i);
  // the same verdicts as the classifier gives each entry on its own, and the same again on a second run
  for (const v of verdicts) expect(classifyTool({ name: v.name, annotations: v.declared }, { trustReadOnlyHints: false }).class).toBe(v.class);
  expect(warmListingPath()).toEqual({ verdicts, asAWhole });
});
