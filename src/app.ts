/**
 * Composition root: opens the database, builds every part of the service from the configuration
 * and wires their routes into one request handler. Tests build an App the same way `main` does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from './config/config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { requestIdOf } from './http/request-id.js';
import { createRouter } from './http/router.js';
import type { Logger } from './ops/logger.js';

export interface App {
  config: Config;
  database: DatabaseHandle;
  logger: Logger;
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): Promise<void>;
}

export interface AppOptions {
  /** An already open, migrated database (tests); otherwise one is opened from the config. */
  database?: DatabaseHandle;
}

export async function createApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  const database = options.database ?? (await openConfiguredDatabase(config));
  const router = createRouter();

  return {
    config,
    database,
    logger,
    handle(req, res) {
      res.setHeader('X-Request-Id', requestIdOf(req));
      router.lookup(req, res);
    },
    async close() {
      if (options.database === undefined) await database.close();
    },
  };
}

export async function openConfiguredDatabase(config: Config): Promise<DatabaseHandle> {
  const database = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    connectTimeoutSeconds: config.dbConnectTimeoutSeconds,
    statementTimeoutMs: config.dbStatementTimeoutMs,
  });
  await database.migrate();
  return database;
}
