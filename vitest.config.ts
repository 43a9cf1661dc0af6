import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests spawn real servers and wrappers; two cores do not like 8 forks of that.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
