/**
 * Webhook deliveries shared by real server processes on one PostgreSQL (docs/webhooks.md,
 * "Several instances"): each event is attempted by one process at a time, a process stopped
 * with SIGTERM gives its claimed events back at once, and a process killed with SIGKILL loses
 * none: another delivers them, with the same `webhook-id`, within WEBHOOK_TIMEOUT_MS + 10 s.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { insertEndpoint } from '../src/db/webhook-queries.js';
import { newSecret, SecretStore } from '../src/webhooks/secrets.js';
import { createKey } from './support/api-keys.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { readMetrics } from './support/metrics.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receivers.js';

const TIMEOUT_MS = 3000;
const ENV = {
  PROFILE_LIMIT: '0',
  WEBHOOK_PRIVATE_ORIGINS: '127.0.0.1/32',
  WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms',
  WEBHOOK_CONCURRENCY: '4',
};

const profile = (name: string, description: string) => ({
  kind: 'profile',
  name,
  creatorEmail: 'x@example.com',
  description,
});

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)('webhook deliveries shared by server processes', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let receiver: WebhookReceiver;
  const services: ServerProcess[] = [];
  let spaces = 0;

  const start = async () => {
    const service = await startServerProcess({ env: { ...testDb.env, ...ENV }, startTimeoutMs: 60_000 });
    services.push(service);
    return service;
  };
  /** A namespace of the test's own, followed by one endpoint aimed at the receiver. */
  async function followedSpace(): Promise<string> {
    spaces += 1;
    const space = `multi${spaces}`;
    await importLines(handle.db, ndjson({ kind: 'namespace', name: space, ownerEmail: `owner@${space}.example` }));
    const key = await createKey(handle);
    const id = `wh_multi${spaces}`;
    const secret = newSecret();
    await insertEndpoint(
      handle.db,
      {
        id,
        apiKeyId: key.id,
        url: receiver.url,
        events: 7,
        description: null,
        secret: new SecretStore(undefined).seal(secret, id),
        names: [],
        namespaces: [space],
      },
      10,
    );
    receiver.secrets.push(secret.shown);
    return space;
  }
  const apply = async (...lines: object[]) => expect((await importLines(handle.db, ndjson(...lines))).ok).toBe(true);
  const delivered = (space: string) =>
    receiver.requests.filter((request) => request.verified?.data.name.endsWith(`@${space}`));

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    handle = await testDb.open();
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    receiver.release(204);
    receiver.answer(() => ({ status: 204 }));
    await Promise.all(services.splice(0).map((service) => service.stop()));
  });
  afterAll(async () => {
    await receiver?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('attempts each event once across two processes, whose delivery counts add up to the events', async () => {
    // The endpoints exist before the processes start: a process without one looks for one only
    // every few seconds.
    const space = await followedSpace();
    const [first, second] = [await start(), await start()];
    const names = Array.from({ length: 40 }, (_, index) => `n${index}@${space}`);
    await apply(...names.map((name) => profile(name, 'one')));
    await eventually(() => delivered(space).length >= 40, 'forty deliveries');
    const requests = delivered(space);
    expect(requests).toHaveLength(40);
    expect(new Set(requests.map((request) => request.verified?.data.name))).toEqual(new Set(names));
    expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).toBe(40);
    const counted = await Promise.all(
      [first, second].map(async (service) =>
        (await readMetrics(service.url)).value('webhook_deliveries_total', { outcome: 'delivered' }),
      ),
    );
    expect(counted.reduce((sum: number, value) => sum + (value ?? 0), 0)).toBe(40);
    // Without WEBHOOK_SECRET_KEY each process says, once, that secrets are stored in the clear.
    for (const service of [first, second]) {
      expect(service.logs.filter((line) => line.msg.startsWith('webhook secrets are stored unencrypted'))).toHaveLength(
        1,
      );
    }
  });

  it('a process stopped with SIGTERM gives its claimed events back: the other delivers them at once', async () => {
    const space = await followedSpace();
    const first = await start();
    receiver.answer(() => 'hold');
    await apply(...['a', 'b', 'c'].map((name) => profile(`${name}@${space}`, 'one')));
    await eventually(() => delivered(space).filter((request) => request.open).length === 3, 'three requests held');
    const held = delivered(space).map((request) => request.headers['webhook-id']);
    receiver.answer(() => ({ status: 204 }));
    await start();
    await first.stop();
    await eventually(() => delivered(space).length === 6, 'the three again, from the other process');
    const again = delivered(space).slice(3);
    expect(new Set(again.map((request) => request.headers['webhook-id']))).toEqual(new Set(held));
    expect(again.every((request) => request.verified !== undefined)).toBe(true);
  });

  it('a process killed with SIGKILL loses nothing: its events come again, same ids, within WEBHOOK_TIMEOUT_MS + 10 s', async () => {
    const space = await followedSpace();
    const victim = await start();
    receiver.answer(() => 'hold');
    await apply(...['a', 'b', 'c', 'd'].map((name) => profile(`${name}@${space}`, 'one')));
    await eventually(() => delivered(space).filter((request) => request.open).length === 4, 'four requests held');
    const held = delivered(space).map((request) => request.headers['webhook-id']);
    receiver.answer(() => ({ status: 204 }));
    await start();
    victim.signal('SIGKILL');
    await victim.exited;
    const killedAt = performance.now();
    // A change made after the kill is delivered by the survivor at once, beside the wait.
    await apply(profile(`later@${space}`, 'one'));
    await eventually(() => delivered(space).some((request) => request.verified?.data.name === `later@${space}`), {
      what: 'a later change delivered by the survivor',
    });
    await eventually(() => delivered(space).length === 9, { what: 'the four again', withinMs: TIMEOUT_MS + 20_000 });
    const again = delivered(space)
      .slice(4)
      .filter((request) => request.verified?.data.name !== `later@${space}`);
    expect(new Set(again.map((request) => request.headers['webhook-id']))).toEqual(new Set(held));
    expect(again.every((request) => request.verified !== undefined)).toBe(true);
    const latest = Math.max(...again.map((request) => request.at));
    expect(latest - killedAt).toBeLessThanOrEqual(TIMEOUT_MS + 10_000);
  });
});
