/**
 * A PostgreSQL test database with the demo data, reached through a TCP proxy the test controls
 * (cut, black-hole, delay): what the database-fault and shutdown suites run the service against.
 */
import { seedDemoData } from '../../src/data/seed.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface ProxiedDatabase {
  database: TestDatabase;
  proxy: TcpProxy;
  /** DATABASE_URL for the service: the database, through the proxy. */
  url: string;
  /** Closes the proxy and drops the database. */
  close(): Promise<void>;
}

export async function createProxiedDemoDatabase(): Promise<ProxiedDatabase> {
  const database = await createTestDatabase('postgres');
  const handle = await database.open();
  try {
    await seedDemoData(handle.db);
  } finally {
    await handle.close();
  }
  const target = new URL(database.url!);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  return {
    database,
    proxy,
    url: proxy.urlThrough(database.url!),
    async close() {
      await proxy.close();
      await database.drop();
    },
  };
}
