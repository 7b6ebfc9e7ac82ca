/**
 * API keys across running servers on one PostgreSQL database: a revocation (and a key made
 * documents-only) is in force on every server within a second, also on a server that holds the
 * key in memory, and a new key is accepted by a server that was asked for it before it existed.
 * Two Apps in this process, each with its own pools and its own LISTEN connection, as two server
 * processes have. Needs PostgreSQL (TEST_DATABASE_URL); skipped without it.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import { insertApiKey, revokeApiKey, setApiKeyDocumentsOnly } from '../src/db/api-key-queries.js';
import { MAX_SILENCE_MS } from '../src/db/change-feed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { generateApiKey, generateApiKeyId, hashApiKey } from '../src/limits/api-key-credentials.js';
import { createKey } from './support/api-keys.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually, expectSeenFrom } from './support/eventually.js';
import { openRestStream } from './support/live-clients.js';

describe.skipIf(!process.env.TEST_DATABASE_URL)('API keys on two servers on one PostgreSQL database', () => {
  let testDb: TestDatabase;
  let writer: DatabaseHandle;
  const handles: DatabaseHandle[] = [];
  const servers: TestServer[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    writer = await testDb.open();
    expect((await seedDemoData(writer.db)).ok).toBe(true);
    for (let i = 0; i < 2; i += 1) {
      const handle = await testDb.open();
      handles.push(handle);
      servers.push(await startTestServer(handle));
    }
    // Both feeds hear their heartbeats: the keys they cache are vouched for.
    await eventually(() => servers.every((server) => server.app.cache.stats().answering), 'both change feeds');
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await Promise.all(handles.map((handle) => handle.close()));
    await writer?.close();
    await testDb?.drop();
  });

  const statusOn = async (server: TestServer, key: string) =>
    (await fetch(`${server.url}/api/demo@me`, { headers: { 'x-api-key': key } })).status;

  it('refuses a revoked key on every server within a second', async () => {
    const { id, key } = await createKey(writer);
    // Twice each: the second answer comes from the server's memory.
    for (const server of servers)
      expect([await statusOn(server, key), await statusOn(server, key)]).toEqual([200, 200]);

    expect(await revokeApiKey(writer.db, id)).toBe('revoked');
    const revokedAt = Date.now();
    await Promise.all(
      servers.map((server) =>
        expectSeenFrom(
          revokedAt,
          MAX_SILENCE_MS,
          async () => (await statusOn(server, key)) === 401,
          'the revoked key refused',
        ),
      ),
    );
  });

  it('makes a key documents-only on every server within a second, and lifts it as fast', async () => {
    const { id, key } = await createKey(writer);
    const statusOfQuery = async (server: TestServer) =>
      (
        await fetch(`${server.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' }),
        })
      ).status;
    for (const server of servers)
      expect([await statusOfQuery(server), await statusOfQuery(server)]).toEqual([200, 200]);
    for (const [documentsOnly, status] of [
      [true, 400],
      [false, 200],
    ] as const) {
      expect(await setApiKeyDocumentsOnly(writer.db, id, documentsOnly)).toBe('updated');
      const changedAt = Date.now();
      await Promise.all(
        servers.map((server) =>
          expectSeenFrom(
            changedAt,
            MAX_SILENCE_MS,
            async () => (await statusOfQuery(server)) === status,
            `documents-only ${documentsOnly}`,
          ),
        ),
      );
    }
  });

  it("holds a revocation it did not hear, and ends the key's streams once it hears again", async () => {
    const [server] = servers;
    if (server === undefined) throw new Error('no server');
    const { id, key } = await createKey(writer);
    expect([await statusOn(server, key), await statusOn(server, key)]).toEqual([200, 200]);
    const stream = await openRestStream(server.url, 'demo@me', { 'x-api-key': key });
    expect(stream.status).toBe(200);

    // The listening connections are cut and cannot come back; the pools' open connections work.
    const admin = postgres(process.env.TEST_DATABASE_URL ?? '', { max: 1, onnotice: () => {} });
    const name = new URL(testDb.url ?? '').pathname.slice(1);
    try {
      await admin.unsafe(`alter database "${name}" allow_connections false`);
      // Waits until the sessions have ended (a terminated session that still runs would pass the
      // revocation's notification on).
      await admin`select pg_terminate_backend(pid, 10000) from pg_stat_activity
                  where datname = ${name} and application_name = 'name-profile-service listen'`;
      await revokeApiKey(writer.db, id);
      await eventually(() => !server.app.cache.stats().answering, {
        what: 'the feed to be lost',
        withinMs: MAX_SILENCE_MS + 1000,
      });
      // Not heard, yet refused: while the feed is lost every key is read from the database.
      expect(await statusOn(server, key)).toBe(401);
      expect(stream.ended).toBe(false);
    } finally {
      await admin.unsafe(`alter database "${name}" allow_connections true`);
      await admin.end();
    }
    await eventually(() => server.app.cache.stats().answering, 'the feed to be back');
    await stream.waitForEnd(2000);
  });

  it('accepts a new key on a server that was asked for it before it existed', async () => {
    const key = generateApiKey();
    const [server] = servers;
    if (server === undefined) throw new Error('no server');
    expect([await statusOn(server, key), await statusOn(server, key)]).toEqual([401, 401]);
    await insertApiKey(writer.db, {
      id: generateApiKeyId(),
      name: 'late app',
      keyHash: hashApiKey(key),
      profileLimit: null,
      ownerCheckLimit: null,
    });
    const createdAt = Date.now();
    await expectSeenFrom(
      createdAt,
      MAX_SILENCE_MS,
      async () => (await statusOn(server, key)) === 200,
      'the new key accepted',
    );
  });
});
