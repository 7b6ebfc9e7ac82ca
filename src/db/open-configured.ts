import type { Config } from '../config/config.js';
import { type DatabaseHandle, openDatabase } from './database.js';

/** The database the configuration names, opened and migrated: what the server and the CLIs use. */
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
