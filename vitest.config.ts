import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: suites start servers and databases of their own, so a few files at a time.
    maxWorkers: 2,
    env: { NODE_ENV: 'test' },
  },
});
