/**
 * Rate limits across real server processes (src/main.ts in child processes), the way operators
 * run several instances:
 *
 * - two processes on one PostgreSQL database and the shared Redis (TEST_REDIS_URL) give one
 *   client 10 owner checks per minute in total, sequentially and in a concurrent burst;
 * - a process whose Redis (a throwaway redis-server of this test) is killed keeps answering and
 *   keeps limiting in memory, and uses Redis again once it is back on the same port.
 *
 * Counters in the shared Redis live for the 60-second window, longer than one test run. Each run
 * therefore gets a key space of its own through RATE_LIMIT_PREFIX, so the processes under test
 * count the client by its real peer address (127.0.0.1), the default an operator gets; nothing
 * in the shared Redis outside that prefix is read or written. The shared Redis is never stopped.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { seedDemoData } from '../src/data/seed.js';
import { DEFAULT_KEY_PREFIX } from '../src/limits/create-rate-limits.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';
import { type ThrowawayRedis, throwawayRedis } from './support/throwaway-redis.js';

const SHARED_REDIS = process.env.TEST_REDIS_URL;
const POSTGRES = process.env.TEST_DATABASE_URL;

/** No answer may take longer than this, whatever Redis does (a guard against hangs, not a benchmark). */
const ANSWER_BOUND_MS = 5_000;

const CHECK_PATH = '/api/owner-check?email=maker@example.com&name=demo@me';
const GRAPHQL_TWO_CHECKS =
  '{ a: ownerCheck(email: "maker@example.com", name: "demo@me") { hasCreated } b: ownerCheck(email: "owner@example.com", name: "demo@me") { hasCreated } }';

interface Answer {
  status: number;
  remaining: string | null;
  retryAfter: string | null;
  body: unknown;
}

async function request(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(ANSWER_BOUND_MS) });
  const text = await response.text();
  return {
    status: response.status,
    remaining: response.headers.get('ratelimit-remaining'),
    retryAfter: response.headers.get('retry-after'),
    body: text === '' ? undefined : (JSON.parse(text) as unknown),
  };
}

const ownerCheck = (server: ServerProcess, headers: Record<string, string> = {}) =>
  request(server.url, CHECK_PATH, { headers });

/** The GraphQL document with two ownerCheck fields; how many of them were answered. */
async function graphqlChecks(
  server: ServerProcess,
  headers: Record<string, string> = {},
): Promise<{ answered: number; refused: number }> {
  const answer = await request(server.url, '/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query: GRAPHQL_TWO_CHECKS }),
  });
  expect(answer.status).toBe(200);
  const body = answer.body as { data: Record<string, unknown>; errors?: Array<{ extensions: { code: string } }> };
  for (const error of body.errors ?? []) expect(error.extensions.code).toBe('RATE_LIMITED');
  return {
    answered: Object.values(body.data).filter((value) => value !== null).length,
    refused: body.errors?.length ?? 0,
  };
}

describe('RATE_LIMIT_PREFIX', () => {
  it('is read from the environment, unset by default (keys then start with nps:rl)', () => {
    expect(loadConfig({}).rateLimitPrefix).toBeUndefined();
    expect(loadConfig({ RATE_LIMIT_PREFIX: 'staging:rl' }).rateLimitPrefix).toBe('staging:rl');
    expect(DEFAULT_KEY_PREFIX).toBe('nps:rl');
  });

  it.each(['has space', 'a'.repeat(65), 'new\nline', 'star*'])(
    'stops start-up with one line naming it for %j',
    (value) => {
      expect(() => loadConfig({ RATE_LIMIT_PREFIX: value })).toThrow(ConfigError);
      expect(() => loadConfig({ RATE_LIMIT_PREFIX: value })).toThrow(
        /^Invalid configuration: RATE_LIMIT_PREFIX must be/,
      );
    },
  );
});

describe.skipIf(SHARED_REDIS === undefined || POSTGRES === undefined)(
  'two server processes on one Redis (needs TEST_REDIS_URL and TEST_DATABASE_URL; skipped without them)',
  () => {
    const prefix = `test:${randomUUID()}`;
    const redis = new Redis(SHARED_REDIS ?? '', { lazyConnect: true });
    let testDb: TestDatabase;
    let servers: ServerProcess[] = [];

    beforeAll(async () => {
      // Two processes share a database only on a PostgreSQL server: PGlite serves one process.
      testDb = await createTestDatabase('postgres');
      const handle = await testDb.open();
      expect((await seedDemoData(handle.db)).ok).toBe(true);
      await handle.close();
      const env = {
        ...testDb.env,
        REDIS_URL: SHARED_REDIS ?? '',
        RATE_LIMIT_PREFIX: prefix,
        // Lets the burst test below use a client address of its own within this run.
        TRUST_PROXY_HOPS: '1',
        LOG_LEVEL: 'info',
      };
      servers = await Promise.all([startServerProcess({ env }), startServerProcess({ env })]);
      for (const server of servers) await server.waitForLog((line) => line.msg === 'rate limits are kept in Redis');
    });
    afterAll(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      await testDb?.drop();
      redis.disconnect();
    });

    it('allows one client 10 owner checks per minute in total across both processes', async () => {
      const answers: Answer[] = [];
      for (let i = 0; i < 14; i++) answers.push(await ownerCheck(servers[i % 2]!));

      expect(answers.map((answer) => answer.status)).toEqual([...Array<number>(10).fill(200), 429, 429, 429, 429]);
      // One counter: what is left goes down by one per request, whichever process answered.
      expect(answers.map((answer) => answer.remaining)).toEqual([
        '9',
        '8',
        '7',
        '6',
        '5',
        '4',
        '3',
        '2',
        '1',
        '0',
        '0',
        '0',
        '0',
        '0',
      ]);
      for (const refused of answers.slice(10)) expect(refused.retryAfter).toMatch(/^\d+$/);
      expect(await redis.get(`${prefix}:owner-check:127.0.0.1`)).toBe('14');
    });

    it('holds the total under a concurrent burst of REST calls and GraphQL fields on both processes', async () => {
      const client = { 'X-Forwarded-For': '203.0.113.77' };
      const rest = Array.from({ length: 20 }, (_, i) => ownerCheck(servers[i % 2]!, client));
      const graphql = Array.from({ length: 10 }, (_, i) => graphqlChecks(servers[i % 2]!, client));
      const [restAnswers, graphqlAnswers] = await Promise.all([Promise.all(rest), Promise.all(graphql)]);

      const restAllowed = restAnswers.filter((answer) => answer.status === 200).length;
      expect(restAnswers.filter((answer) => answer.status === 429)).toHaveLength(20 - restAllowed);
      const graphqlAllowed = graphqlAnswers.reduce((sum, answer) => sum + answer.answered, 0);
      expect(graphqlAnswers.reduce((sum, answer) => sum + answer.refused, 0)).toBe(20 - graphqlAllowed);
      expect(restAllowed + graphqlAllowed).toBe(10);
      expect(await redis.get(`${prefix}:owner-check:203.0.113.77`)).toBe('40');
    });
  },
);

describe.skipIf(SHARED_REDIS === undefined)(
  'a server process whose Redis dies (needs TEST_REDIS_URL, as a sign that redis-server is installed; skipped without it)',
  () => {
    describe.each(databaseKinds())('on %s', (kind) => {
      const LIMIT = 4;
      let testDb: TestDatabase | undefined;
      let redis: ThrowawayRedis | undefined;
      let server: ServerProcess | undefined;
      afterEach(async () => {
        await server?.stop();
        await redis?.kill();
        await testDb?.drop();
        server = undefined;
        redis = undefined;
        testDb = undefined;
      });

      /** The owner-check counter of 127.0.0.1 in the throwaway Redis. */
      async function counterInRedis(): Promise<string | null> {
        const probe = new Redis((redis as ThrowawayRedis).url);
        try {
          return await probe.get(`${DEFAULT_KEY_PREFIX}:owner-check:127.0.0.1`);
        } finally {
          probe.disconnect();
        }
      }

      it('keeps answering and limiting while Redis is down, and uses Redis again once it is back', async () => {
        testDb = await createTestDatabase(kind);
        if (kind === 'postgres') {
          // The embedded database is seeded by the service itself on first start.
          const handle = await testDb.open();
          await seedDemoData(handle.db);
          await handle.close();
        }
        redis = await throwawayRedis();
        await redis.start();
        server = await startServerProcess({
          env: { ...testDb.env, REDIS_URL: redis.url, OWNER_CHECK_LIMIT: String(LIMIT), LOG_LEVEL: 'info' },
        });
        await server.waitForLog((line) => line.msg === 'rate limits are kept in Redis');

        // Up: counted in Redis.
        expect((await ownerCheck(server)).remaining).toBe('3');
        expect((await ownerCheck(server)).remaining).toBe('2');
        expect(await counterInRedis()).toBe('2');

        // Redis is killed while requests are in flight: every one of them is answered, none with 5xx.
        const inFlight = Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0 ? ownerCheck(server!) : request(server!.url, '/api/demo@me'),
        );
        await redis.kill();
        const settled = await Promise.allSettled(inFlight);
        expect(settled.filter((result) => result.status === 'rejected')).toEqual([]);
        for (const result of settled) {
          expect([200, 429]).toContain((result as PromiseFulfilledResult<Answer>).value.status);
        }
        await server.waitForLog((line) => line.msg.startsWith('Redis connection lost'));

        // Down: still answered, still limited (in this process's memory), headers and all.
        const whileDown: Answer[] = [];
        for (let i = 0; i <= LIMIT; i++) whileDown.push(await ownerCheck(server));
        const statuses = whileDown.map((answer) => answer.status);
        for (const status of statuses) expect([200, 429]).toContain(status);
        expect(statuses.at(-1)).toBe(429);
        expect(statuses.slice(statuses.indexOf(429)).every((status) => status === 429)).toBe(true);
        for (const answer of whileDown) expect(answer.remaining).toMatch(/^\d+$/);
        expect(whileDown.at(-1)!.retryAfter).toMatch(/^\d+$/);
        expect(await graphqlChecks(server)).toEqual({ answered: 0, refused: 2 });
        expect((await request(server.url, '/api/demo@me')).status).toBe(200);

        // Back on the same port (empty, as after a crash): the service reconnects by itself and
        // counts in Redis again, a fresh budget there.
        await redis.start();
        await server.waitForLog((line) => line.msg.startsWith('Redis connection restored'), 15_000);
        const afterReturn: Answer[] = [];
        for (let i = 0; i <= LIMIT; i++) afterReturn.push(await ownerCheck(server));
        expect(afterReturn.map((answer) => answer.status)).toEqual([...Array<number>(LIMIT).fill(200), 429]);
        expect(afterReturn.map((answer) => answer.remaining)).toEqual(['3', '2', '1', '0', '0']);
        expect(await counterInRedis()).toBe(String(LIMIT + 1));

        // No request failed with a server error at any point.
        expect(server.logs.filter((line) => typeof line.status === 'number' && line.status >= 500)).toEqual([]);
      });
    });
  },
);
