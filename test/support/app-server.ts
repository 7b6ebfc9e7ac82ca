/**
 * The service in the test process: an App on a test database, listening on a free loopback port.
 * Suites that need a real socket but no separate process use it.
 *
 * `/graphql` is answered by the path TEST_GRAPHQL_HTTP_PATH names (`service`, the default, or
 * `yoga`): vitest.config.ts runs the GraphQL suites once more with `yoga`, so every one of them
 * proves its answers on Yoga's own handler and on the service's HTTP layer.
 */
import { afterAll, beforeAll } from 'vitest';
import { type App, type AppOptions, createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { seedDemoData } from '../../src/data/seed.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import type { GraphQLHttpPath } from '../../src/graphql/transport/over-http.js';
import type { GraphQLServerDeps } from '../../src/graphql/yoga.js';
import { listen, type RunningServer } from '../../src/http/server.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { type DatabaseKind, useTestDatabase } from './databases.js';

/** The path of this test run's in-process servers (see above). */
export const TEST_GRAPHQL_HTTP_PATH: GraphQLHttpPath =
  process.env.TEST_GRAPHQL_HTTP_PATH === 'yoga' ? 'yoga' : 'service';

/**
 * True in the second run of the GraphQL suites, with `/graphql` answered by Yoga's handler. That
 * run is there to compare the two paths, so a test that sends nothing to `/graphql` over HTTP
 * (REST, the REST event stream, graphql-ws, /metrics, the database alone) skips it with
 * `it.skipIf(GRAPHQL_PATH_RERUN)`: it would repeat the first run exactly. (graphql-ws comes in
 * through the server's upgrade, which the path does not touch; src/app.ts.)
 */
export const GRAPHQL_PATH_RERUN = TEST_GRAPHQL_HTTP_PATH === 'yoga';

export interface TestServer {
  app: App;
  url: string;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Overrides TEST_GRAPHQL_HTTP_PATH (the differential test starts one server of each). */
  graphqlHttpPath?: GraphQLHttpPath;
  /** GraphQL server settings (its document caches, compiled execution, plugins of the test's own). */
  graphql?: Pick<GraphQLServerDeps, 'documents' | 'compiledExecution' | 'keptAnswers' | 'plugins'>;
  /** Avatar image settings; by default the origin process keeps the service's priority (see below). */
  avatarImages?: AppOptions['avatarImages'];
  /** How webhook URLs' host names resolve (a test's names for the addresses under test). */
  webhookResolve?: AppOptions['webhookResolve'];
}

/**
 * Starts an App on `database` (left open on close). `env` holds configuration variables. Avatar
 * originals are not fetched unless `env` turns AVATAR_PROXY on: the demo data's images are on
 * hosts outside the test machine, which tests never reach.
 */
export async function startTestServer(
  database: DatabaseHandle,
  env: Record<string, string> = {},
  logger: Logger = createLogger('silent', { pretty: false }),
  options: TestServerOptions = {},
): Promise<TestServer> {
  const config = loadConfig({ NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', AVATAR_PROXY: 'off', ...env });
  const graphqlHttpPath = options.graphqlHttpPath ?? TEST_GRAPHQL_HTTP_PATH;
  // The origin process at idle priority gets no CPU while other work (other suites, other jobs of
  // the machine) wants every core: an avatar answer would then depend on the machine's load. Test
  // servers keep it at the service's priority; test/avatar-images.test.ts proves the idle priority.
  const avatarImages = { idlePriority: false, ...options.avatarImages };
  const app = await createApp(config, logger, {
    database,
    graphqlHttpPath,
    graphql: options.graphql,
    avatarImages,
    webhookResolve: options.webhookResolve,
  });
  const running: RunningServer = await listen(app, 0, '127.0.0.1');
  return { app, url: running.url, close: () => running.close() };
}

export interface SuiteServer {
  /** The suite's database, open for the whole suite. */
  readonly handle: DatabaseHandle;
  readonly server: TestServer;
}

/**
 * For the surrounding suite: a test database of `kind`, filled by `fill`, and an App on it
 * configured by `env`; closed and dropped after the suite's tests.
 */
export function useTestServer(
  kind: DatabaseKind,
  fill: (db: DatabaseHandle['db']) => Promise<unknown>,
  env: Record<string, string> = {},
): SuiteServer {
  const database = useTestDatabase(kind, fill);
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer(database.handle, env);
  });
  afterAll(async () => {
    await server?.close();
  });
  return {
    get handle() {
      return database.handle;
    },
    get server() {
      if (server === undefined) throw new Error('the suite server is used before its beforeAll ran');
      return server;
    },
  };
}

/** For the surrounding suite: the demo data on PGlite, served by an App configured by `env`. */
export function useDemoServer(env: Record<string, string> = {}): SuiteServer {
  return useTestServer('pglite', seedDemoData, env);
}
