/**
 * The service in the test process: an App on a test database, listening on a free loopback port.
 * Suites that need a real socket but no separate process use it.
 *
 * `/graphql` is answered by the path TEST_GRAPHQL_HTTP_PATH names (`service`, the default, or
 * `yoga`): vitest.config.ts runs the GraphQL suites once more with `yoga`, so every one of them
 * proves its answers on Yoga's own handler and on the service's HTTP layer.
 */
import { afterAll, beforeAll } from 'vitest';
import { type App, createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { seedDemoData } from '../../src/data/seed.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import type { GraphQLHttpPath } from '../../src/graphql/over-http.js';
import type { GraphQLServerDeps } from '../../src/graphql/yoga.js';
import { listen, type RunningServer } from '../../src/http/server.js';
import { createLogger, type Logger } from '../../src/ops/logger.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

/** The path of this test run's in-process servers (see above). */
export const TEST_GRAPHQL_HTTP_PATH: GraphQLHttpPath =
  process.env.TEST_GRAPHQL_HTTP_PATH === 'yoga' ? 'yoga' : 'service';

export interface TestServer {
  app: App;
  url: string;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Overrides TEST_GRAPHQL_HTTP_PATH (the differential test starts one server of each). */
  graphqlHttpPath?: GraphQLHttpPath;
  /** GraphQL server settings (its document caches, compiled execution). */
  graphql?: Pick<GraphQLServerDeps, 'documents' | 'compiledExecution'>;
}

/** Starts an App on `database` (left open on close). `env` holds configuration variables. */
export async function startTestServer(
  database: DatabaseHandle,
  env: Record<string, string> = {},
  logger: Logger = createLogger('silent', { pretty: false }),
  options: TestServerOptions = {},
): Promise<TestServer> {
  const config = loadConfig({ NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', ...env });
  const graphqlHttpPath = options.graphqlHttpPath ?? TEST_GRAPHQL_HTTP_PATH;
  const app = await createApp(config, logger, { database, graphqlHttpPath, graphql: options.graphql });
  const running: RunningServer = await listen(app, 0, '127.0.0.1');
  return { app, url: running.url, close: () => running.close() };
}

export interface DemoServer {
  readonly server: TestServer;
}

/**
 * For the surrounding suite: a PGlite test database with the demo data and an App on it,
 * configured by `env`; closed and dropped after the suite's tests.
 */
export function useDemoServer(env: Record<string, string> = {}): DemoServer {
  let testDb: TestDatabase | undefined;
  let handle: DatabaseHandle | undefined;
  let server: TestServer | undefined;
  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await seedDemoData(handle.db);
    server = await startTestServer(handle, env);
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });
  return {
    get server() {
      if (server === undefined) throw new Error('the demo server is used before its beforeAll ran');
      return server;
    },
  };
}
