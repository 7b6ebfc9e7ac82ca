/**
 * Two apps on one Redis that hangs (a throwaway redis-server the test stops with SIGSTOP; the
 * shared one is never stopped), as a client meets them over HTTP: after a few command timeouts
 * each app stops asking Redis (the circuit breaker of src/limits/redis-breaker.ts) and answers at
 * once, limiting owner checks in its own memory; it says so once in its log and in
 * `rate_limit_store_up`; once Redis answers again, both apps share one budget again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { REDIS_COMMAND_TIMEOUT_MS } from '../src/limits/redis-connection.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { type CapturedLog, captureLog } from './support/log-capture.js';
import { readMetrics } from './support/metrics.js';
import { type ThrowawayRedis, throwawayRedis } from './support/throwaway-redis.js';

const LIMIT = 3;
const CHECK_PATH = '/api/owner-check?email=maker@example.com&name=demo@me';

interface App {
  server: TestServer;
  log: CapturedLog;
}

interface TimedAnswer {
  status: number;
  ms: number;
}

/** One owner check for `client` (its X-Forwarded-For address), timed. */
async function ownerCheck(app: App, client: string): Promise<TimedAnswer> {
  const started = performance.now();
  const response = await fetch(`${app.server.url}${CHECK_PATH}`, {
    headers: { 'X-Forwarded-For': client },
    signal: AbortSignal.timeout(5_000),
  });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

/**
 * How long `answers` took together. Answers well under the command timeout take less than one
 * timeout together (a bound on the sum, so that one stall of a busy test machine is no failure).
 */
const totalMs = (answers: TimedAnswer[]): number => answers.reduce((total, { ms }) => total + ms, 0);

/** `count` owner checks for `client`, one after another, alternating between `apps`. */
async function alternate(apps: App[], client: string, count: number): Promise<TimedAnswer[]> {
  const answers: TimedAnswer[] = [];
  for (let i = 0; i < count; i++) answers.push(await ownerCheck(apps[i % apps.length] as App, client));
  return answers;
}

/** The app's `rate_limit_store_up` sample, or undefined when /metrics has none. */
async function storeUp(app: App): Promise<number | undefined> {
  return (await readMetrics(app.server.url)).value('rate_limit_store_up');
}

const tripped = (app: App) => app.log.find('warn', 'Redis not answering').length > 0;

describe.skipIf(process.env.TEST_REDIS_URL === undefined)(
  'two apps whose Redis hangs (needs TEST_REDIS_URL, as a sign that redis-server is installed; skipped without it)',
  () => {
    let testDb: TestDatabase;
    let handle: DatabaseHandle;
    let redis: ThrowawayRedis | undefined;
    let apps: App[] = [];

    beforeAll(async () => {
      testDb = await createTestDatabase('pglite');
      handle = await testDb.open();
      expect((await seedDemoData(handle.db)).ok).toBe(true);
    });
    afterEach(async () => {
      redis?.thaw();
      await Promise.all(apps.map((app) => app.server.close()));
      await redis?.kill();
      apps = [];
      redis = undefined;
    });
    afterAll(async () => {
      await handle?.close();
      await testDb?.drop();
    });

    it('answers at once and limits per app while Redis hangs, and shares one budget again once it answers', async () => {
      const server = await throwawayRedis();
      redis = server;
      await server.start();
      const env = { REDIS_URL: server.url, OWNER_CHECK_LIMIT: String(LIMIT), TRUST_PROXY_HOPS: '1' };
      for (let i = 0; i < 2; i++) {
        const log = captureLog('info');
        apps.push({ server: await startTestServer(handle, env, log.logger), log });
      }
      await eventually(
        () => apps.every((app) => app.log.find('info', 'rate limits are kept in Redis').length === 1),
        'both apps on Redis',
      );

      // Shared: one budget for both apps.
      expect((await alternate(apps, '198.51.100.1', LIMIT + 1)).map((answer) => answer.status)).toEqual([
        200, 200, 200, 429,
      ]);
      for (const app of apps) expect(await storeUp(app)).toBe(1);

      server.freeze();
      try {
        // Requests keep coming while Redis hangs; the first ones wait for the command timeout,
        // until each app has seen enough of them (each answered nonetheless).
        await Promise.all(
          apps.map(async (app, i) => {
            while (!tripped(app)) expect([200, 429]).toContain((await ownerCheck(app, `198.51.100.${10 + i}`)).status);
          }),
        );

        // Tripped: every answer comes at once, and each app enforces OWNER_CHECK_LIMIT by itself.
        for (const app of apps) {
          const answers = await alternate([app], '198.51.100.2', LIMIT + 2);
          expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429, 429]);
          expect(totalMs(answers)).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS);
          expect(await storeUp(app)).toBe(0);
          expect(app.log.find('warn', 'Redis')).toHaveLength(1);
        }
      } finally {
        server.thaw();
      }

      // Answering again: both apps find out by themselves and share one budget again.
      await eventually(
        () => apps.every((app) => app.log.find('info', 'Redis answering again').length === 1),
        'both apps to find Redis answering again',
      );
      expect((await alternate(apps, '198.51.100.3', LIMIT + 1)).map((answer) => answer.status)).toEqual([
        200, 200, 200, 429,
      ]);
      for (const app of apps) {
        expect(await storeUp(app)).toBe(1);
        expect(app.log.find('warn', 'Redis')).toHaveLength(1);
      }
    });
  },
);
