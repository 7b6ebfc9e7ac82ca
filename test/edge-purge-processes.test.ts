/**
 * System tier (service processes on PostgreSQL, TEST_DATABASE_URL): two server processes with
 * CACHE_PURGE_URLS purge each change once for the deployment, not once each (the leader holds
 * a PostgreSQL advisory lock on its direct session), and when the leader dies the other takes
 * over within seconds, purging the cache whole first (the dead leader's backlog is lost).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { type FakePurgeEndpoint, startFakePurgeEndpoint } from './support/fake-purge-endpoint.js';
import { metricTotal, readMetrics } from './support/metrics.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

const NAMESPACE = { kind: 'namespace', name: 'duo', ownerEmail: 'owner@duo.example' };
const profile = (name: string, description: string) => ({
  kind: 'profile',
  name,
  creatorEmail: 'maker@duo.example',
  description,
});

async function leads(service: ServerProcess): Promise<boolean> {
  return (await readMetrics(service.url)).value('edge_purge_leader') === 1;
}

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)('two service processes purging one cache', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let endpoint: FakePurgeEndpoint;
  const services: ServerProcess[] = [];

  beforeAll(async () => {
    endpoint = await startFakePurgeEndpoint();
    testDb = await createTestDatabase('postgres');
    handle = await testDb.open();
    await importLines(handle.db, ndjson(NAMESPACE, profile('one@duo', 'Before')));
    for (let index = 0; index < 2; index += 1) {
      services.push(
        await startServerProcess({ env: { ...testDb.env, CACHE_PURGE_URLS: endpoint.url }, startTimeoutMs: 60_000 }),
      );
    }
  }, 120_000);
  afterAll(async () => {
    for (const service of services) {
      service.signal('SIGTERM');
      await service.exited;
    }
    await handle?.close();
    await testDb?.drop();
    await endpoint?.close();
  });

  /** Purge requests naming `tag` from index `from` on. */
  const purgesOf = (tag: string, from: number) => endpoint.requests.slice(from).filter((r) => r.tags.includes(tag));

  it('purges each change once for the deployment, and another process takes over when the leader dies', async () => {
    // One leader, elected within a couple of seconds.
    const leaders = await eventually(
      async () => {
        const leading = await Promise.all(services.map(leads));
        return leading.filter(Boolean).length === 1 && leading;
      },
      { what: 'exactly one leader', withinMs: 5000, everyMs: 200 },
    );

    const start = endpoint.requests.length;
    await importLines(handle.db, ndjson(profile('one@duo', 'After')));
    const committed = Date.now();
    const first = await endpoint.waitFor(
      (request) => endpoint.requests.indexOf(request) >= start && request.tags.includes('p:one%40duo'),
    );
    expect(first.at - committed).toBeLessThan(1000);
    // The purge and its second purge after the settling time, from one process: two, not four.
    // A second purger would have purged at once too, long before the leader's second purge.
    const firstIndex = endpoint.requests.indexOf(first);
    await endpoint.waitFor(
      (request) => endpoint.requests.indexOf(request) > firstIndex && request.tags.includes('p:one%40duo'),
      10_000,
    );
    expect(purgesOf('p:one%40duo', start)).toHaveLength(2);

    const leaderIndex = leaders.indexOf(true);
    const leader = services[leaderIndex] as ServerProcess;
    const follower = services[1 - leaderIndex] as ServerProcess;
    expect(await metricTotal(follower.url, 'edge_purges_sent_total')).toBe(0);
    const beforeDeath = endpoint.requests.length;
    leader.signal('SIGKILL');
    await leader.exited;
    services.splice(leaderIndex, 1);
    const takenOver = Date.now();
    await endpoint.waitFor(
      (request) => endpoint.requests.indexOf(request) >= beforeDeath && request.xkey === 'all',
      10_000,
    );
    expect(Date.now() - takenOver).toBeLessThan(5000);
    expect(await leads(follower)).toBe(true);

    const again = endpoint.requests.length;
    await importLines(handle.db, ndjson(profile('two@duo', 'New')));
    await endpoint.waitFor(
      (request) => endpoint.requests.indexOf(request) >= again && request.tags.includes('p:two%40duo'),
    );
  }, 60_000);
});
