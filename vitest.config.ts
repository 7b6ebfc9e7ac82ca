import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { DEFAULT_TEST_DATABASE_URL, DEFAULT_TEST_REDIS_URL } from './test/support/system-tools.js';

/**
 * Two tiers (docs/testing.md). `npm test` runs every suite that needs only Node and the npm
 * packages: unit suites and the app in process on PGlite (and on PostgreSQL too when
 * TEST_DATABASE_URL is set). `npm run test:system` runs the suites below, which need tools of the
 * machine; its global set-up fails, naming each missing tool, before any of them starts.
 */
const SYSTEM_SUITES = [
  // Chromium
  'test/graphiql-browser.test.ts',
  'test/api-reference-browser.test.ts',
  'test/avatar-browser.test.ts',
  'test/live-updates-browser.test.ts',
  // PostgreSQL 15's server binaries and PgBouncer: servers of the test's own
  'test/postgres-cluster.test.ts',
  'test/database-servers.test.ts',
  // Redis
  'test/limits-redis.test.ts',
  'test/rate-limits-redis-hang.test.ts',
  'test/rate-limits-processes.test.ts',
  'test/api-keys-redis.test.ts',
  // `npm start` and server processes on a PostgreSQL server
  'test/npm-start.test.ts',
  'test/ops-workers.test.ts',
  'test/live-updates-processes.test.ts',
  'test/edge-purge-processes.test.ts',
  'test/webhooks-processes.test.ts',
  // examples/typescript-client: npm installs its packages, it is built and run against a server process
  'test/typescript-client-example.test.ts',
  // Varnish with the xkey vmod
  'test/edge-cache-varnish.test.ts',
];

/**
 * The suites whose servers answer GraphQL in the test process. They run a second time with
 * `/graphql` answered by Yoga's own handler alone (TEST_GRAPHQL_HTTP_PATH=yoga, see
 * test/support/app-server.ts), so each proves that the service's HTTP layer answers exactly as
 * Yoga does (src/graphql/transport/over-http.ts). Their tests that send nothing to `/graphql`
 * over HTTP skip the second run (GRAPHQL_PATH_RERUN in test/support/app-server.ts).
 */
const GRAPHQL_SUITES = [
  'test/change-feed-api.test.ts',
  'test/change-feed-clients.test.ts',
  'test/live-updates.test.ts',
  'test/live-updates-abuse.test.ts',
  'test/request-encoding.test.ts',
  'test/early-headers.test.ts',
  'test/graphql.test.ts',
  'test/graphql-armor.test.ts',
  'test/graphql-errors.test.ts',
  'test/graphql-prepared-operations.test.ts',
  'test/trusted-documents.test.ts',
  'test/graphql-http.test.ts',
  'test/graphql-clients.test.ts',
  'test/client-mistakes.test.ts',
  'test/look-alikes.test.ts',
  'test/hostile-input.test.ts',
  'test/hostile-graphql-fields.test.ts',
  'test/privacy.test.ts',
  'test/rate-limits-http.test.ts',
  'test/discovery.test.ts',
  'test/profile-cache.test.ts',
  'test/profile-answers.test.ts',
  'test/record-order.test.ts',
  'test/readme-examples.test.ts',
  'test/avatar.test.ts',
  'test/ops.test.ts',
  'test/graphiql-browser.test.ts',
];

/**
 * Unit suites that need a module graph of their own, in a worker that ran no other file first.
 */
const ISOLATED_SUITES = [
  // Watches which modules an import loads.
  'test/lazy-loading.test.ts',
  // Replaces a module (vi.mock) that other suites load first.
  'test/api-key-guard.test.ts',
  // Wait for the process's database connections and LISTEN sessions to come and go: in a worker
  // shared with other suites they failed in a full CI run, alone they pass (docs/testing.md).
  'test/db-faults.test.ts',
  'test/change-feed-start.test.ts',
  // Adds up what young-generation collections promote: in a worker whose heap other suites have
  // grown, V8 promoted 53 MB of the patched loop once in a Node-only npm test; alone it is near zero.
  'test/postgres-query-retention.test.ts',
];

const inTier = (system: boolean) => (file: string) => SYSTEM_SUITES.includes(file) === system;
const UNIT_ENV = { NODE_ENV: 'test' };
const SYSTEM_ENV = {
  NODE_ENV: 'test',
  TEST_DATABASE_URL: process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL,
  TEST_REDIS_URL: process.env.TEST_REDIS_URL ?? DEFAULT_TEST_REDIS_URL,
};
const YOGA_PATH = { TEST_GRAPHQL_HTTP_PATH: 'yoga' };
const UNIT_SETUP = ['test/support/pglite-templates-setup.ts'];
const SYSTEM_SETUP = ['test/support/system-tier-setup.ts', ...UNIT_SETUP];

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
    // With TEST_CPU_LOG=<file>: one line per test file with its wall and CPU time (docs/testing.md).
    setupFiles: ['test/support/cpu-per-file.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...SYSTEM_SUITES, ...ISOLATED_SUITES],
          env: UNIT_ENV,
          globalSetup: UNIT_SETUP,
          // A worker keeps the modules it imported (the app, GraphQL, Drizzle, PGlite) for the
          // next file instead of importing them again for each: docs/testing.md, "Test run time".
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'unit:isolated',
          include: ISOLATED_SUITES,
          env: UNIT_ENV,
          globalSetup: UNIT_SETUP,
        },
      },
      {
        extends: true,
        test: {
          name: 'unit:yoga-handler',
          include: GRAPHQL_SUITES.filter(inTier(false)),
          env: { ...UNIT_ENV, ...YOGA_PATH },
          globalSetup: UNIT_SETUP,
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: SYSTEM_SUITES,
          env: SYSTEM_ENV,
          globalSetup: SYSTEM_SETUP,
        },
      },
      {
        extends: true,
        test: {
          name: 'system:yoga-handler',
          include: GRAPHQL_SUITES.filter(inTier(true)),
          env: { ...SYSTEM_ENV, ...YOGA_PATH },
          globalSetup: SYSTEM_SETUP,
        },
      },
    ],
  },
});
