/**
 * The service's change feed (src/service/change-feed.ts) starts on the first live-update
 * subscription when the profile cache is off. A start the database did not answer must not be
 * remembered: the next subscription tries again and, once the database answers, gets its events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { UnavailableError } from '../src/errors/service-error.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { openRestStream } from './support/live-clients.js';

const NAMESPACE = { kind: 'namespace', name: 'feed', ownerEmail: 'feed-owner@example.com' };
const profile = (description: string) => ({
  kind: 'profile',
  name: 'ada@feed',
  creatorEmail: 'ada@example.org',
  description,
  records: { '1': { type: 'name', value: 'ada' } },
});

describe.each(databaseKinds())('the change feed started by a subscription, on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  /** The database does not answer the first LISTEN, as while it is down; it answers every later one. */
  let listens = 0;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await importLines(handle.db, ndjson(NAMESPACE, profile('First')));
    const flaky: DatabaseHandle = {
      ...handle,
      listenForChanges(handlers) {
        listens += 1;
        if (listens === 1) {
          const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
          return Promise.reject(new UnavailableError(refused));
        }
        return handle.listenForChanges(handlers);
      },
    };
    server = await startTestServer(flaky, { PROFILE_CACHE_SIZE: '0', PROFILE_LIMIT: '0' });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('answers 503 while the feed cannot start, and starts it on a later subscription', async () => {
    // The cache is off: nothing listens until a subscription asks.
    expect(listens).toBe(0);
    const refused = await openRestStream(server.url, 'ada@feed');
    await refused.waitForEnd();
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.parse(refused.text)).toEqual({ error: 'Service unavailable' });

    const stream = await openRestStream(server.url, 'ada@feed');
    try {
      expect(stream.status).toBe(200);
      expect(listens).toBe(2);
      const report = await importLines(handle.db, ndjson(profile('Second')));
      expect(report.ok).toBe(true);
      const [event] = await stream.waitFor(1, 10_000);
      expect(event?.event).toBe('profile');
      expect(JSON.parse(event?.data ?? '{}')).toMatchObject({ name: 'ada@feed', description: 'Second' });
    } finally {
      stream.stop();
    }
  }, 30_000);
});
