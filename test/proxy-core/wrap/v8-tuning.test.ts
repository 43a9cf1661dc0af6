// The wrapper's V8 flags take effect when set at run time (as the wrap command sets them, after Node started):
// a child process counts how many calls a small function needs before V8 optimises it, with the tuning and
// without, reads the young generation's size after an allocation-heavy loop, and has V8 say what it inlines.
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

/** Runs in the child: a function calling two of some 200 bytes of bytecode each, optimised once warm. */
const inlining = (tune: boolean) => `
  if (${tune}) (await import(${JSON.stringify(TUNING)})).tuneV8ForWrapper();
  function a(m) { let s = 0; for (const k of Object.keys(m)) { if (typeof m[k] === 'string') s += m[k].length; else if (typeof m[k] === 'number') s += m[k]; else if (Array.isArray(m[k])) s += m[k].length; else if (m[k] && typeof m[k] === 'object') s += Object.keys(m[k]).length; } return s + (m.id ?? 0) + (m.x ?? 1) * 2; }
  function b(m) { let s = 1; for (const k of Object.keys(m)) { if (typeof m[k] === 'string') s *= m[k].length || 1; else if (typeof m[k] === 'number') s -= m[k]; else if (Array.isArray(m[k])) s ^= m[k].length; else if (m[k] && typeof m[k] === 'object') s |= Object.keys(m[k]).length; } return s + (m.id ?? 0) + (m.y ?? 2) * 3; }
  function outer(m) { return a(m) + b(m); }
  %PrepareFunctionForOptimization(outer); %PrepareFunctionForOptimization(a); %PrepareFunctionForOptimization(b);
  for (let i = 0; i < 100; i++) outer({ id: i, s: 'x', arr: [1], o: { p: 1 } });
  %OptimizeFunctionOnNextCall(outer);
  outer({ id: 1, s: 'x', arr: [1], o: { p: 1 } });
`;

/** How many functions TurboFan inlined into \`outer\` (V8's trace, on stdout). */
function inlined(tune: boolean): number {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--trace-turbo-inlining', '--input-type=module', '-e', inlining(tune)], { encoding: 'utf8' });
  return out.split('\n').filter((l) => /^Inlining .* into .*SharedFunctionInfo outer>/.test(l)).length;
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

  test('an optimised function inlines less of what it calls', () => {
    // both callees fit V8's default budget; with the tuning's, fewer do
    expect(inlined(false)).toBe(2);
    expect(inlined(true)).toBeLessThan(2);
  });
});
