import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Pothos and Yoga load graphql's CommonJS build; without this alias the tests would load its
    // ESM build as a second copy, and graphql-js refuses schemas "from another module or realm".
    alias: [
      { find: /^graphql$/, replacement: fileURLToPath(new URL('./node_modules/graphql/index.js', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: suites start servers and databases of their own, so a few files at a time.
    maxWorkers: 2,
    env: { NODE_ENV: 'test' },
  },
});
