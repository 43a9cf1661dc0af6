// Plain JS, loaded natively (`--configLoader native` in the test script): a TypeScript config would be bundled
// into node_modules/.vite-temp first, and anything written into node_modules after `npm ci` makes npm think its
// tree changed, so `npx airlock` stops finding the local bin.
import { defineConfig } from 'vitest/config';
import { BaseSequencer } from 'vitest/node';

/**
 * Files that mostly wait (a client's real 60 s request timeout) or run for minutes (the MCP conformance suite)
 * start first, so they overlap the rest of the suite instead of adding to its end; everything else keeps
 * vitest's own order.
 */
class WaitersFirst extends BaseSequencer {
  /** @param {import('vitest/node').TestSpecification[]} files */
  async sort(files) {
    const sorted = await super.sort(files);
    const waits = (f) => /(client-timeout|conformance)\.test\.ts$/.test(f.moduleId);
    return [...sorted.filter(waits), ...sorted.filter((f) => !waits(f))];
  }
}

/**
 * The renderer's state modules (`renderer/src/lib/*.svelte.ts`) hold runes: compiled as the app's build compiles
 * them (to the client runtime's signals, after Vite has stripped the types), their logic runs in unit tests.
 * Components are not compiled here: the UI tests drive them in Chromium.
 */
const svelteModules = {
  name: 'airlock:svelte-modules',
  async transform(code, id) {
    if (!/\.svelte\.ts$/.test(id)) return null;
    // loaded only by a run that has such a module: the compiler is large
    const { compileModule } = await import('svelte/compiler');
    const { js } = compileModule(code, { filename: id, generate: 'client' });
    return { code: js.code, map: js.map };
  },
};

export default defineConfig({
  plugins: [svelteModules],
  // vitest's cache (test durations) lives outside node_modules, for the same reason as above
  cacheDir: '.cache/vitest',
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/fresh-build.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests spawn real servers and wrappers: two cores do not like 8 forks of that. Three lanes on
    // two cores: one of them is mostly taken by a file that only waits out a client's real 60 s request timeout
    // (test/e2e/client-timeout.test.ts, started first), so two stay busy.
    maxWorkers: 3,
    reporters: ['default'],
    sequence: { sequencer: WaitersFirst },
  },
});
