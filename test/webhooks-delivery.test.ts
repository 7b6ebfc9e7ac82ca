/**
 * Webhook deliveries to real receivers (docs/webhooks.md), on every test database: every
 * delivery verified with the standardwebhooks library as receivers verify it (the docs' receiver,
 * examples/webhook-receiver.ts, for the plain case), the exact body, the same `webhook-id` on every
 * retry, order and coalescing per name, the retry schedule with Retry-After, 410 and days of
 * failures disabling, redirects not followed, time-outs and closed sockets, a slow endpoint that
 * delays no other, the bound on requests in flight, secret rotation (two signatures), secrets
 * encrypted at rest, and replay. Endpoints are made through the query module here; the REST API
 * has its own suite (webhooks-api). On PostgreSQL, the lock order of the outbox's transactions:
 * a queueing pass held halfway does not deadlock a claim or a settlement of another process.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type ProfileEvent } from '../examples/webhook-receiver.js';
import { importLines } from '../src/data/importer.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import {
  claimEvents,
  insertEndpoint,
  listDeliveries,
  queueEvents,
  rotateSecret,
  setEndpointStatus,
  settleDelivered,
} from '../src/db/webhook-queries.js';
import { newSecret, SecretStore } from '../src/webhooks/secrets.js';
import { createKey, type TestKey } from './support/api-keys.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { readMetrics } from './support/metrics.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receivers.js';

const ENV = {
  PROFILE_LIMIT: '0',
  WEBHOOK_PRIVATE_ORIGINS: '127.0.0.1/32',
  WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms',
  // A request the tests hold is answered by the test: never timed out by a loaded machine.
  WEBHOOK_TIMEOUT_MS: '60000',
  WEBHOOK_CONCURRENCY: '3',
};
/** The time-out test's own: silence is given up on soon. */
const SHORT_TIMEOUT = { WEBHOOK_TIMEOUT_MS: '1000' };

const namespace = (name: string) => ({ kind: 'namespace', name, ownerEmail: `owner@${name}.example` });
const profile = (name: string, description: string) => ({
  kind: 'profile',
  name,
  creatorEmail: 'x@example.com',
  description,
});

describe.each(databaseKinds())('webhook deliveries on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let key: TestKey;
  const receivers: WebhookReceiver[] = [];
  const plain = new SecretStore(undefined);
  let made = 0;
  /** Each test watches a namespace of its own. */
  let space = '';

  const apply = async (...lines: object[]) => expect((await importLines(handle.db, ndjson(...lines))).ok).toBe(true);

  /** An endpoint of the suite's key, made as the service makes them. */
  async function endpoint(
    url: string,
    filter: { names?: string[]; namespaces?: string[]; events?: number } = {},
    store = plain,
    target = server,
  ): Promise<{ id: string; secret: string }> {
    made += 1;
    const id = `wh_test${made}`;
    const secret = newSecret();
    const created = await insertEndpoint(
      handle.db,
      {
        id,
        apiKeyId: key.id,
        url,
        events: filter.events ?? 7,
        description: null,
        secret: store.seal(secret, id),
        names: filter.names ?? [],
        namespaces: filter.namespaces ?? [space],
      },
      100,
    );
    expect(created).not.toBe('too-many');
    target.app.webhooks.wake(true);
    return { id, secret: secret.shown };
  }

  async function receiver(...secrets: string[]): Promise<WebhookReceiver> {
    const started = await startWebhookReceiver(secrets);
    receivers.push(started);
    return started;
  }

  const changes = async () =>
    (
      (await (await fetch(`${server.url}/api/changes?limit=1000`)).json()) as {
        changes: Array<{ cursor: string; name: string }>;
      }
    ).changes;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    key = await createKey(handle);
    server = await startTestServer(handle, ENV);
  });
  afterEach(async () => {
    for (const started of receivers.splice(0)) {
      started.release(204);
      await started.close();
    }
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  let spaces = 0;
  const newSpace = async () => {
    spaces += 1;
    space = `wh${spaces}`;
    await apply(namespace(space));
    return space;
  };

  it('delivers each change to the docs’ receiver, signed: verified by standardwebhooks, the exact body', async () => {
    await newSpace();
    const received: ProfileEvent[] = [];
    const secretHolder: { secret?: string } = {};
    // The docs' receiver needs the secret before it starts; the endpoint needs the receiver's URL.
    const http = await import('node:http');
    const placeholder = http.createServer();
    await new Promise<void>((resolve) => placeholder.listen(0, '127.0.0.1', resolve));
    const port = (placeholder.address() as AddressInfo).port;
    await new Promise<void>((resolve) => placeholder.close(() => resolve()));
    const hook = await endpoint(`http://127.0.0.1:${port}/hook`);
    secretHolder.secret = hook.secret;
    const docsReceiver = createReceiver(hook.secret, (event) => {
      received.push(event);
    });
    docsReceiver.listen(port, '127.0.0.1');
    await once(docsReceiver, 'listening');
    try {
      await apply(profile(`ada@${space}`, 'one'), profile(`bob@${space}`, 'one'));
      await eventually(() => received.length === 2, 'the two creations');
      await apply(profile(`ada@${space}`, 'two'));
      await eventually(() => received.length === 3, 'the update');
      await apply({ kind: 'remove', name: `bob@${space}` });
      await eventually(() => received.length === 4, 'the removal');
      const log = await changes();
      expect(received.map((event) => `${event.type} ${event.data.name}`)).toEqual([
        expect.stringMatching(/^profile\.created (ada|bob)@/),
        expect.stringMatching(/^profile\.created (ada|bob)@/),
        `profile.updated ada@${space}`,
        `profile.removed bob@${space}`,
      ]);
      for (const event of received) {
        expect(event.id).toMatch(/^msg_[0-9a-f]{32}$/);
        expect(log.some((change) => change.cursor === event.data.cursor && change.name === event.data.name)).toBe(true);
        expect(event.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
      expect(new Set(received.map((event) => event.id)).size).toBe(4);
      // The profile is exactly the lookup's document; a removal carries none.
      const updated = received[2];
      expect(updated?.data.profile).toEqual(await (await fetch(`${server.url}/api/ada@${space}`)).json());
      expect(received[3]?.data).toEqual({ name: `bob@${space}`, cursor: expect.any(String) });
    } finally {
      await new Promise<void>((resolve) => docsReceiver.close(() => resolve()));
    }
  });

  it('sends one name in change order, one at a time, and a burst while one is in flight as one delivery of the latest', async () => {
    await newSpace();
    const target = await receiver();
    const hook = await endpoint(target.url);
    target.secrets.push(hook.secret);
    target.answer((_request, index) => (index === 0 ? 'hold' : { status: 204 }));
    await apply(profile(`ada@${space}`, 'one'));
    await eventually(() => target.requests.length === 1, 'the first delivery, held');
    await apply(profile(`ada@${space}`, 'two'));
    await apply(profile(`ada@${space}`, 'three'));
    await apply(profile(`ada@${space}`, 'four'));
    // Nothing more for the name while its delivery is open.
    await eventually(
      async () => (await readMetrics(server.url)).value('webhook_events_waiting') === 2,
      'one sending, one waiting',
    );
    expect(target.requests).toHaveLength(1);
    target.release();
    await eventually(() => target.requests.length === 2, 'the latest state');
    const states = target.requests.map(
      (request) => (request.verified?.data.profile as { description?: string } | undefined)?.description,
    );
    expect(states).toEqual(['one', 'four']);
    expect(target.requests.every((request) => request.verified !== undefined)).toBe(true);
  });

  it('retries with the same webhook-id on the schedule, honours Retry-After, and logs every attempt', async () => {
    await newSpace();
    const target = await receiver();
    const hook = await endpoint(target.url);
    target.secrets.push(hook.secret);
    target.answer((_request, index) =>
      index === 0 ? { status: 500 } : index === 1 ? { status: 429, headers: { 'Retry-After': '1' } } : { status: 204 },
    );
    const figures = async () => {
      const metrics = await readMetrics(server.url);
      return [
        metrics.total('webhook_delivery_seconds_count'),
        metrics.value('webhook_deliveries_total', { outcome: 'retrying' }) ?? 0,
        metrics.value('webhook_deliveries_total', { outcome: 'delivered' }) ?? 0,
      ];
    };
    const [timedBefore = 0, retryingBefore = 0, deliveredBefore = 0] = await figures();
    await apply(profile(`ada@${space}`, 'one'));
    await eventually(() => target.requests.length === 3, 'three attempts');
    const ids = target.requests.map((request) => request.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    // The schedule says 200 ms after the second attempt; its Retry-After said a second.
    const [, second, third] = target.requests;
    expect((third?.at ?? 0) - (second?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    // Each attempt is signed anew, at its own time.
    expect(target.requests.every((request) => request.verified !== undefined)).toBe(true);
    await eventually(async () => (await listDeliveries(handle.db, hook.id, 10)).length === 3, 'three attempts logged');
    const log = await listDeliveries(handle.db, hook.id, 10);
    expect(log.map((attempt) => [attempt.attempt, attempt.status, attempt.error])).toEqual([
      [3, 204, null],
      [2, 429, 'answered 429'],
      [1, 500, 'answered 500'],
    ]);
    expect(log[0]?.nextAttemptAt).toBeNull();
    expect(log[1]?.nextAttemptAt).toBeInstanceOf(Date);
    // The suite's other endpoints may still be at work: at least this endpoint's attempts.
    const [timed = 0, retrying = 0, delivered = 0] = await figures();
    expect(timed - timedBefore).toBeGreaterThanOrEqual(3);
    expect(retrying - retryingBefore).toBeGreaterThanOrEqual(2);
    expect(delivered - deliveredBefore).toBeGreaterThanOrEqual(1);
  });

  it('marks an event failed when the schedule is over, and goes on with the next change', async () => {
    await newSpace();
    const target = await receiver();
    const hook = await endpoint(target.url);
    target.secrets.push(hook.secret);
    target.answer(() => ({ status: 503 }));
    const failedBefore = (await readMetrics(server.url)).value('webhook_deliveries_total', { outcome: 'failed' }) ?? 0;
    await apply(profile(`ada@${space}`, 'one'));
    // The first attempt and three retries.
    await eventually(() => target.requests.length === 4, 'four attempts');
    await eventually(
      async () =>
        (await readMetrics(server.url)).value('webhook_deliveries_total', { outcome: 'failed' }) === failedBefore + 1,
      'the event failed',
    );
    const [last] = await listDeliveries(handle.db, hook.id, 1);
    expect(last).toMatchObject({ attempt: 4, status: 503, nextAttemptAt: null });
    target.answer(() => ({ status: 204 }));
    await apply(profile(`ada@${space}`, 'two'));
    await eventually(
      () => target.requests.some((request) => request.verified?.type === 'profile.updated'),
      'the next change',
    );
  });

  it('disables an endpoint that answers 410 at once, keeps its events, and delivers them once enabled', async () => {
    await newSpace();
    const target = await receiver();
    const hook = await endpoint(target.url);
    target.secrets.push(hook.secret);
    target.answer(() => ({ status: 410 }));
    await apply(profile(`ada@${space}`, 'one'));
    await eventually(async () => (await endpointStatus(hook.id)).status === 'disabled', 'the endpoint disabled');
    expect((await endpointStatus(hook.id)).disabled_reason).toBe('the endpoint answered 410 Gone');
    await eventually(
      async () => (await readMetrics(server.url)).value('webhook_events_waiting') === 1,
      'its event kept',
    );
    // A second endpoint on the same names: once it has both changes, the dispatcher has been past
    // them, and nothing went to the disabled one.
    const witness = await receiver();
    witness.secrets.push((await endpoint(witness.url, { namespaces: [space] })).secret);
    await apply(profile(`ada@${space}`, 'two'), profile(`bob@${space}`, 'one'));
    target.answer(() => ({ status: 204 }));
    await eventually(() => witness.requests.length === 2, 'the other endpoint served');
    expect(target.requests).toHaveLength(1);
    await setEndpointStatus(handle.db, key.id, hook.id, 'active');
    server.app.webhooks.wake(true);
    await eventually(async () => {
      if (target.requests.filter((request) => request.verified !== undefined).length >= 3) return true;
      // Said when the wait fails: what the outbox holds for the endpoint, and what it was told.
      throw new Error(
        `outbox ${JSON.stringify(await outboxOf(hook.id))}, deliveries ${JSON.stringify(await listDeliveries(handle.db, hook.id, 10))}`,
      );
    }, 'delivered');
    const delivered = target.requests.slice(1).map((request) => {
      const data = request.verified?.data;
      return `${data?.name} ${(data?.profile as { description?: string } | undefined)?.description}`;
    });
    expect(delivered.sort()).toEqual([`ada@${space} two`, `bob@${space} one`]);
  });

  /** Runs `test` with the suite's server replaced by one with `env` (the only one delivering). */
  async function withServer(env: Record<string, string>, test: (own: TestServer) => Promise<void>): Promise<void> {
    await server.close();
    const own = await startTestServer(handle, { ...ENV, ...env });
    try {
      await test(own);
    } finally {
      await own.close();
      server = await startTestServer(handle, ENV);
    }
  }

  it('never follows a redirect, gives up on silence at WEBHOOK_TIMEOUT_MS, and retries after a closed socket', async () => {
    await newSpace();
    await withServer(SHORT_TIMEOUT, async (own) => {
      const target = await receiver();
      const hook = await endpoint(target.url, {}, plain, own);
      target.secrets.push(hook.secret);
      target.answer((_request, index) =>
        index === 0
          ? { status: 302, headers: { Location: '/elsewhere' } }
          : index === 1
            ? 'hold'
            : index === 2
              ? 'close'
              : { status: 204 },
      );
      await apply(profile(`ada@${space}`, 'one'));
      await eventually(() => target.requests.length === 4, 'four attempts');
      expect(target.requests.map((request) => request.path)).toEqual(['/hook', '/hook', '/hook', '/hook']);
      await eventually(async () => (await listDeliveries(handle.db, hook.id, 10)).length === 4, 'four attempts logged');
      const log = (await listDeliveries(handle.db, hook.id, 10)).reverse();
      expect(log.map((attempt) => [attempt.status, attempt.error])).toEqual([
        [302, 'redirect (302) not followed'],
        [null, 'timeout'],
        [null, expect.stringMatching(/connection reset|socket hang up/)],
        [204, null],
      ]);
      expect(log[1]?.durationMs).toBeGreaterThanOrEqual(1000);
    });
  });

  it('keeps delivering to others while one endpoint never answers, and holds at most WEBHOOK_CONCURRENCY requests to it', async () => {
    await newSpace();
    const dead = await receiver();
    const alive = await receiver();
    const deadHook = await endpoint(dead.url);
    const aliveHook = await endpoint(alive.url);
    dead.secrets.push(deadHook.secret);
    alive.secrets.push(aliveHook.secret);
    dead.answer(() => 'hold');
    await apply(...Array.from({ length: 8 }, (_, i) => profile(`p${i}@${space}`, 'one')));
    // Three open at the dead endpoint, and every event at the other one, while those three wait.
    await eventually(() => dead.openRequests().length === 3, 'three requests held by the dead endpoint');
    await eventually(() => alive.requests.length === 8, 'the other endpoint’s eight deliveries');
    expect(dead.openRequests()).toHaveLength(3);
    expect(dead.requests).toHaveLength(3);
    // Freed slots are used at once: one answer, one more request.
    dead.answer(() => ({ status: 204 }));
    dead.release();
    await eventually(() => dead.requests.filter((request) => request.verified !== undefined).length === 8, 'the rest');
  });

  it('signs with the new and the old secret for a day after a rotation, then with the new one only', async () => {
    await newSpace();
    const target = await receiver();
    const hook = await endpoint(target.url);
    target.answer(() => ({ status: 204 }));
    const next = newSecret();
    await rotateSecret(handle.db, key.id, hook.id, plain.seal(next, hook.id), new Date(Date.now() + 86_400_000));
    await apply(profile(`ada@${space}`, 'one'));
    await eventually(() => target.requests.length === 1, 'a delivery after the rotation');
    const [both] = target.requests;
    expect(String(both?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    target.secrets.splice(0, Infinity, hook.secret);
    expect(reverify(target, 0)).toBe(true);
    target.secrets.splice(0, Infinity, next.shown);
    expect(reverify(target, 0)).toBe(true);
    // The old secret's day is over.
    await handle.db.execute(
      sql`update webhook_endpoints set previous_secret_until = now() - interval '1 second' where id = ${hook.id}`,
    );
    await apply(profile(`ada@${space}`, 'two'));
    await eventually(() => target.requests.length === 2, 'a delivery after the day');
    expect(String(target.requests[1]?.headers['webhook-signature']).split(' ')).toHaveLength(1);
    target.secrets.splice(0, Infinity, hook.secret);
    expect(reverify(target, 1)).toBe(false);
    target.secrets.splice(0, Infinity, next.shown);
    expect(reverify(target, 1)).toBe(true);
  });

  it('stores secrets encrypted under WEBHOOK_SECRET_KEY, signs with them, and says so where the key is missing', async () => {
    await newSpace();
    const secretKey = Buffer.alloc(32, 7);
    // Only the keyed server delivers, until the one without the key is given the event.
    await server.app.webhooks.close();
    const keyed = await startTestServer(handle, { ...ENV, WEBHOOK_SECRET_KEY: secretKey.toString('hex') });
    let keyedOpen = true;
    try {
      const target = await receiver();
      const hook = await endpoint(target.url, {}, new SecretStore(secretKey), keyed);
      target.secrets.push(hook.secret);
      const stored = await endpointStatus(hook.id);
      expect(stored.secret).toMatch(/^aes256gcm:/);
      expect(stored.secret).not.toContain(hook.secret.slice('whsec_'.length));
      await apply(profile(`ada@${space}`, 'one'));
      await eventually(() => target.requests.some((request) => request.verified !== undefined), 'a verified delivery');
      await keyed.close();
      keyedOpen = false;
      await server.close();
      server = await startTestServer(handle, ENV);
      await apply(profile(`ada@${space}`, 'two'));
      await eventually(
        async () => (await listDeliveries(handle.db, hook.id, 1))[0]?.status === null,
        'a failed attempt',
      );
      const [attempt] = await listDeliveries(handle.db, hook.id, 1);
      expect(attempt?.error).toBe(
        'the webhook secret cannot be read: it is encrypted and WEBHOOK_SECRET_KEY is not set',
      );
      expect(target.requests).toHaveLength(1);
    } finally {
      if (keyedOpen) await keyed.close();
    }
  });

  it('delivers again, with new ids, every change after a replayed cursor', async () => {
    await newSpace();
    const target = await receiver();
    const hook = await endpoint(target.url);
    target.secrets.push(hook.secret);
    await apply(profile(`ada@${space}`, 'one'));
    await eventually(() => target.requests.length === 1, 'the first delivery');
    const before = (await changes()).findLast((change) => change.name === `ada@${space}`)?.cursor ?? '';
    await apply(profile(`bob@${space}`, 'one'), profile(`cy@${space}`, 'one'));
    await eventually(() => target.requests.length === 3, 'two more');
    const { replayFrom } = await import('../src/db/webhook-queries.js');
    const { decodeChangeCursor } = await import('../src/service/change-cursors.js');
    const position = decodeChangeCursor(before);
    if (position === undefined || position === 'now') throw new Error('not a cursor');
    await replayFrom(handle.db, key.id, hook.id, position);
    server.app.webhooks.wake(true);
    await eventually(() => target.requests.length === 5, 'the replay');
    const replayed = target.requests.slice(3);
    expect(replayed.map((request) => request.verified?.data.name).sort()).toEqual([`bob@${space}`, `cy@${space}`]);
    const earlier = new Set(target.requests.slice(0, 3).map((request) => request.headers['webhook-id']));
    expect(replayed.every((request) => !earlier.has(request.headers['webhook-id']))).toBe(true);
  });

  it('refuses at the attempt an address the guard refuses, however the endpoint got in', async () => {
    await newSpace();
    const target = await receiver();
    // Made while 127.0.0.1 was allowed; delivered by a server that does not allow it.
    const strict = await startTestServer(handle, { ...ENV, WEBHOOK_PRIVATE_ORIGINS: '' });
    await server.app.webhooks.close();
    try {
      const hook = await endpoint(target.url, {}, plain, strict);
      await apply(profile(`ada@${space}`, 'one'));
      await eventually(async () => (await listDeliveries(handle.db, hook.id, 1)).length === 1, 'an attempt');
      const [attempt] = await listDeliveries(handle.db, hook.id, 1);
      expect(attempt).toMatchObject({ status: null, error: 'address 127.0.0.1 refused' });
      expect(target.requests).toEqual([]);
    } finally {
      await strict.close();
      await server.close();
      server = await startTestServer(handle, ENV);
    }
  });

  async function outboxOf(id: string) {
    const result = (await handle.db.execute(
      sql`select e.name, e.status, e.attempt, e.next_attempt_at, e.claimed_until, ep.status as endpoint, ep.fed_commit_seq, ep.fed_seq
          from webhook_endpoints ep left join webhook_events e on e.endpoint_id = ep.id where ep.id = ${id}`,
    )) as unknown as Array<Record<string, unknown>> | { rows: Array<Record<string, unknown>> };
    return Array.isArray(result) ? result : result.rows;
  }

  async function endpointStatus(id: string) {
    const result = (await handle.db.execute(
      sql`select status, disabled_reason, secret from webhook_endpoints where id = ${id}`,
    )) as unknown as Array<Record<string, string>> | { rows: Array<Record<string, string>> };
    const rows = Array.isArray(result) ? result : result.rows;
    return rows[0] ?? {};
  }
});

/** Whether request `index` verifies with the receiver's current secrets. */
function reverify(target: WebhookReceiver, index: number): boolean {
  const request = target.requests[index];
  if (request === undefined) return false;
  return target.secrets.some((secret) => {
    try {
      new Webhook(secret).verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      });
      return true;
    } catch {
      return false;
    }
  });
}

describe.runIf(databaseKinds().includes('postgres'))('the outbox’s lock order on PostgreSQL', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  /** A connection of the test's own, outside the handle's pool: it holds a row to pause a pass. */
  let holder: postgres.Sql;
  let key: TestKey;
  let made = 0;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    handle = await testDb.open();
    holder = postgres(testDb.url ?? '', { max: 2, onnotice: () => {} });
    key = await createKey(handle);
  });
  afterAll(async () => {
    await holder?.end();
    await handle?.close();
    await testDb?.drop();
  });

  const apply = async (...lines: object[]) => expect((await importLines(handle.db, ndjson(...lines))).ok).toBe(true);

  /** An endpoint following namespace `space`, made at the current end of the change log. */
  async function endpoint(space: string): Promise<string> {
    made += 1;
    const id = `wh_lock${made}`;
    const created = await insertEndpoint(
      handle.db,
      {
        id,
        apiKeyId: key.id,
        url: 'http://127.0.0.1:9/hook',
        events: 7,
        description: null,
        secret: new SecretStore(undefined).seal(newSecret(), id),
        names: [],
        namespaces: [space],
      },
      100,
    );
    expect(created).not.toBe('too-many');
    return id;
  }

  /** The statements (their beginnings) of this database's other sessions that wait for a lock now. */
  const waitingForLocks = async () =>
    (
      await holder`
        select query from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`
    ).map((row) => String(row.query).trim());

  /** Runs `work` while the holder's transaction holds the event row of `eventName`, and gives it up at `release`'s word. */
  async function holdingEvent(eventName: string, work: (release: () => Promise<void>) => Promise<void>) {
    const held = await holder.reserve();
    try {
      await held`begin`;
      const [row] = await held`select id from webhook_events where name = ${eventName} for update`;
      expect(row).toBeDefined();
      await work(async () => {
        await held`commit`;
      });
    } finally {
      held.release();
    }
  }

  /** A promise's outcome, seen without awaiting it. */
  function watched<T>(promise: Promise<T>) {
    const state: { settled: boolean } = { settled: false };
    const result = promise.finally(() => {
      state.settled = true;
    });
    result.catch(() => {});
    return { result, state };
  }

  it('a claim passes over an endpoint whose events a queueing pass is writing, instead of deadlocking with it', async () => {
    const space = 'lockq';
    await apply(namespace(space));
    const id = await endpoint(space);
    await apply(profile(`a@${space}`, 'one'), profile(`b@${space}`, 'one'));
    expect((await queueEvents(handle.db, 1000))?.queued).toBe(2);
    // b waits for a retry, a is due; both names change again.
    await handle.db.execute(
      sql`update webhook_events set next_attempt_at = now() + interval '1 hour' where name = ${`b@${space}`}`,
    );
    await apply(profile(`a@${space}`, 'two'), profile(`b@${space}`, 'two'));
    await holdingEvent(`b@${space}`, async (release) => {
      // The pass replaces a's waiting event, then waits for b's row.
      const queueing = watched(queueEvents(handle.db, 1000));
      await eventually(
        async () => (await waitingForLocks()).some((query) => query.startsWith('with start as')),
        'the queueing pass waiting for the held event',
      );
      // Meanwhile another process claims: a is due.
      const claiming = watched(claimEvents(handle.db, 'other process', 10, 10, 60_000));
      await eventually(
        async () => claiming.state.settled || (await waitingForLocks()).length >= 2,
        'the claim done or waiting',
      );
      await release();
      const [queued, claimed] = await Promise.allSettled([queueing.result, claiming.result]);
      expect(queued).toMatchObject({ status: 'fulfilled', value: { queued: 2 } });
      // The endpoint was the pass's: the claim took nothing of it.
      expect(claimed).toEqual({ status: 'fulfilled', value: [] });
    });
    const [due] = await claimEvents(handle.db, 'this process', 10, 10, 60_000);
    expect(due).toMatchObject({ endpointId: id, name: `a@${space}`, attempt: 1 });
  });

  it('a settlement that ends a failing streak waits for a queueing pass that gives back its expired claim, instead of deadlocking with it', async () => {
    const space = 'locks';
    await apply(namespace(space));
    const id = await endpoint(space);
    await apply(profile(`x@${space}`, 'one'), profile(`v@${space}`, 'one'));
    await queueEvents(handle.db, 1000);
    const claimed = (await claimEvents(handle.db, 'slow process', 10, 10, 60_000)).filter(
      (event) => event.endpointId === id,
    );
    const x = claimed.find((event) => event.name === `x@${space}`);
    expect(claimed.map((event) => event.name).sort()).toEqual([`v@${space}`, `x@${space}`]);
    // v changes again (a waiting event beside the one being sent); then both claims expire. The
    // endpoint was failing: delivering x writes its row too.
    await apply(profile(`v@${space}`, 'two'));
    await queueEvents(handle.db, 1000);
    await handle.db.execute(
      sql`update webhook_events set claimed_until = now() - interval '1 second' where endpoint_id = ${id} and status = 'sending'`,
    );
    await handle.db.execute(sql`update webhook_endpoints set failing_since = now() where id = ${id}`);
    await holdingEvent(`v@${space}`, async (release) => {
      // The pass gives the expired claims back: it waits for v's row, the sent one.
      const queueing = watched(queueEvents(handle.db, 1000));
      await eventually(
        async () => (await waitingForLocks()).some((query) => query.includes('delete from webhook_events s')),
        'the queueing pass waiting for the held event',
      );
      // The slow process's delivery of x ends now.
      if (x === undefined) throw new Error('x was not claimed');
      const settling = watched(
        settleDelivered(handle.db, x, 'slow process', { status: 204, durationMs: 1, error: null, nextAttemptAt: null }),
      );
      await eventually(
        async () => settling.state.settled || (await waitingForLocks()).length >= 2,
        'the settlement done or waiting',
      );
      await release();
      const outcomes = await Promise.allSettled([queueing.result, settling.result]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled']);
    });
    // The claim had expired and was given back first: x waits to be delivered again (at least once).
    const rows = await handle.db.execute(
      sql`select name, status from webhook_events where endpoint_id = ${id} order by name`,
    );
    const events = (Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows) as Array<Record<string, string>>;
    expect(events.map((event) => `${event.name} ${event.status}`)).toEqual([
      `v@${space} waiting`,
      `x@${space} waiting`,
    ]);
  });
});
