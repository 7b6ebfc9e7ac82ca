import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The suites whose servers answer GraphQL in the test process. They run a second time with
 * `/graphql` answered by Yoga's own handler alone (TEST_GRAPHQL_HTTP_PATH=yoga, see
 * test/support/app-server.ts), so each proves that the service's HTTP layer answers exactly as
 * Yoga does (src/graphql/transport/over-http.ts).
 */
const GRAPHQL_SUITES = [
  'test/live-updates.test.ts',
  'test/live-updates-abuse.test.ts',
  'test/request-encoding.test.ts',
  'test/graphql.test.ts',
  'test/graphql-armor.test.ts',
  'test/graphql-errors.test.ts',
  'test/graphql-http.test.ts',
  'test/graphql-clients.test.ts',
  'test/client-mistakes.test.ts',
  'test/look-alikes.test.ts',
  'test/hostile-input.test.ts',
  'test/privacy.test.ts',
  'test/rate-limits-http.test.ts',
  'test/discovery.test.ts',
  'test/profile-cache.test.ts',
  'test/record-order.test.ts',
  'test/readme-examples.test.ts',
  'test/avatar.test.ts',
  'test/ops.test.ts',
  'test/graphiql-browser.test.ts',
];

export default defineConfig({
  resolve: {
    // Pothos and Yoga load graphql's CommonJS build; without this alias the tests would load its
    // ESM build as a second copy, and graphql-js refuses schemas "from another module or realm".
    alias: [
      { find: /^graphql$/, replacement: fileURLToPath(new URL('./node_modules/graphql/index.js', import.meta.url)) },
    ],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: suites start servers and databases of their own, so a few files at a time.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'service', include: ['test/**/*.test.ts'], env: { NODE_ENV: 'test' } } },
      {
        extends: true,
        test: {
          name: 'yoga-handler',
          include: GRAPHQL_SUITES,
          env: { NODE_ENV: 'test', TEST_GRAPHQL_HTTP_PATH: 'yoga' },
        },
      },
    ],
  },
});
