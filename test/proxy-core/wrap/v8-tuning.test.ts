// The wrapper's V8 flags take effect when set at run time (as the wrap command sets them, after Node started):
// a child process counts how many calls a small function needs before V8 optimises it, with the tuning and
// without, and reads the young generation's size after an allocation-heavy loop.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from '../../helpers/airlock.js';

const TUNING = join(ROOT, 'proxy-core', 'dist', 'wrap', 'v8-tuning.js');

/** Runs in the child: `tune` says whether to call tuneV8ForWrapper first. Prints a JSON line. */
const probe = (tune: boolean) => `
  const { getHeapSpaceStatistics } = await import('node:v8');
  if (${tune}) (await import(${JSON.stringify(TUNING)})).tuneV8ForWrapper();
  // a function the size of a step of the call path, called until V8 has optimised it (status bit 16)
  function step(m) { const id = m.id; const text = typeof id === 'string' ? id : String(id); return text.length + (m.params?.name?.length ?? 0); }
  let calls = 0;
  for (; calls < 200000; calls++) {
    step({ id: calls, params: { name: 'echo' } });
    if (calls % 50 === 0 && (%GetOptimizationStatus(step) & 16) !== 0) break;
  }
  // allocation that survives a scavenge or two: with the growth factor at 1 the young generation keeps its size
  const keep = [];
  for (let i = 0; i < 400000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep.splice(0, 10000); }
  const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
  console.log(JSON.stringify({ calls, young }));
`;

function run(tune: boolean): { calls: number; young: number } {
  // optimisation done on the main thread, so that the status is read once it is decided, not when a helper gets to it
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '--input-type=module', '-e', probe(tune)], { encoding: 'utf8' });
  return JSON.parse(out.trim()) as { calls: number; young: number };
}

describe('tuneV8ForWrapper', () => {
  test('the call path is optimised after fewer calls, and the young generation keeps its first size', () => {
    const plain = run(false);
    const tuned = run(true);
    // optimised in both (the loop ends before its cap), and sooner with the tuning (1,350 calls against 600 with
    // Node 20: V8 also waits a fixed number of looks, so the ratio is smaller than the budgets')
    expect(plain.calls).toBeLessThan(200000);
    expect(tuned.calls * 1.5).toBeLessThan(plain.calls);
    // V8's default lets the young generation grow under this load; the tuning keeps it smaller
    expect(tuned.young).toBeLessThan(plain.young);
  });
});
