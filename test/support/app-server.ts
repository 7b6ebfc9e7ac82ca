/**
 * The service in the test process: an App on a test database, listening on a free loopback port.
 * Suites that need a real socket but no separate process use it.
 */
import { type App, createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { listen, type RunningServer } from '../../src/http/server.js';
import { createLogger, type Logger } from '../../src/ops/logger.js';

export interface TestServer {
  app: App;
  url: string;
  close(): Promise<void>;
}

/** Starts an App on `database` (left open on close). `env` holds configuration variables. */
export async function startTestServer(
  database: DatabaseHandle,
  env: Record<string, string> = {},
  logger: Logger = createLogger('silent', { pretty: false }),
): Promise<TestServer> {
  const config = loadConfig({ NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', ...env });
  const app = await createApp(config, logger, { database });
  const running: RunningServer = await listen(app, 0, '127.0.0.1');
  return { app, url: running.url, close: () => running.close() };
}
