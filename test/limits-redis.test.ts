/**
 * Rate limits in Redis: one budget across processes, and answers (limited in memory) while Redis
 * is away or hangs. Each "process" here is a createRateLimits instance with a connection of its own, as
 * two server processes would have. Tests that stop Redis run a redis-server of their own; the
 * shared one (TEST_REDIS_URL) is never stopped.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { createRateLimits, DEFAULT_KEY_PREFIX } from '../src/limits/create-rate-limits.js';
import type { RateLimitDecision, RateLimiter, RateLimits } from '../src/limits/rate-limit.js';
import {
  connectRedis,
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_MAX_RECONNECT_DELAY_MS,
} from '../src/limits/redis-connection.js';
import { eventually } from './support/eventually.js';
import { type CapturedLog, captureLog } from './support/log-capture.js';
import { freePort, type ThrowawayRedis, throwawayRedis } from './support/throwaway-redis.js';

const SHARED_REDIS = process.env.TEST_REDIS_URL;

/** No consume may take longer than this, whatever Redis does (a guard against hangs, not a benchmark). */
const CONSUME_BOUND_MS = REDIS_COMMAND_TIMEOUT_MS + 1_500;

const opened: RateLimits[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((limits) => limits.close()));
});

function limitsOn(
  redisUrl: string,
  keyPrefix: string,
  log: CapturedLog = captureLog(),
  env: Record<string, string> = {},
) {
  const config = loadConfig({ NODE_ENV: 'test', REDIS_URL: redisUrl, ...env });
  const limits = createRateLimits(config, log.logger, { keyPrefix });
  opened.push(limits);
  return limits;
}

const uniquePrefix = () => `test:${randomUUID()}`;

/** Consumes once and checks that the answer came back within CONSUME_BOUND_MS. */
async function boundedConsume(limiter: RateLimiter, key: string): Promise<RateLimitDecision> {
  const started = performance.now();
  const decision = await limiter.consume(key);
  expect(performance.now() - started).toBeLessThan(CONSUME_BOUND_MS);
  return decision;
}

/** Alternates between the limiters, `count` consumes in all; returns which were allowed. */
async function alternate(limiters: RateLimiter[], key: string, count: number): Promise<boolean[]> {
  const allowed: boolean[] = [];
  for (let i = 0; i < count; i++) {
    allowed.push((await boundedConsume(limiters[i % limiters.length] as RateLimiter, key)).allowed);
  }
  return allowed;
}

interface TimedDecision {
  allowed: boolean;
  ms: number;
}

/**
 * How long `answers` took together. Answers well under the command timeout take less than one
 * timeout together (a bound on the sum, so that one stall of a busy test machine is no failure).
 */
const totalMs = (answers: TimedDecision[]): number => answers.reduce((total, { ms }) => total + ms, 0);

/** `count` consumes one after another, each with how long its answer took. */
async function timedConsumes(limiter: RateLimiter, key: string, count: number): Promise<TimedDecision[]> {
  const answers: TimedDecision[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const { allowed } = await boundedConsume(limiter, key);
    answers.push({ allowed, ms: performance.now() - started });
  }
  return answers;
}

/**
 * Consumes one after another until `condition` holds (at most 10 s); `slow` counts the answers
 * that waited for the command timeout. Not `eventually`: each consume asserts its own bound, and
 * `eventually` would take a failed assertion for "not yet".
 */
async function consumeUntil(limiter: RateLimiter, key: string, condition: () => boolean): Promise<{ slow: number }> {
  const deadline = performance.now() + 10_000;
  let slow = 0;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`still waiting on Redis after ${slow} slow answers`);
    const [answer] = await timedConsumes(limiter, key, 1);
    if ((answer?.ms ?? 0) >= REDIS_COMMAND_TIMEOUT_MS - 10) slow++;
  }
  return { slow };
}

describe.skipIf(SHARED_REDIS === undefined)('Redis-backed limits (needs TEST_REDIS_URL; skipped without it)', () => {
  const url = SHARED_REDIS ?? '';
  const raw = new Redis(url, { lazyConnect: true });
  afterAll(() => raw.quit());

  it('two processes on one Redis share one owner-check budget of 10', async () => {
    const prefix = uniquePrefix();
    const first = limitsOn(url, prefix);
    const second = limitsOn(url, prefix);

    const allowed = await alternate([first.ownerCheck, second.ownerCheck], '203.0.113.5', 14);

    expect(allowed).toEqual([...Array<boolean>(10).fill(true), false, false, false, false]);
    expect(await raw.get(`${prefix}:owner-check:203.0.113.5`)).toBe('14');
  });

  it('holds the budget under concurrent requests to both processes', async () => {
    const prefix = uniquePrefix();
    const limiters = [limitsOn(url, prefix).ownerCheck, limitsOn(url, prefix).ownerCheck];

    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (limiters[i % 2] as RateLimiter).consume('203.0.113.6')),
    );

    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
  });

  it('reports remaining budget and reset time from the shared counter', async () => {
    const prefix = uniquePrefix();
    const first = limitsOn(url, prefix, captureLog(), { OWNER_CHECK_LIMIT: '3' });
    const second = limitsOn(url, prefix, captureLog(), { OWNER_CHECK_LIMIT: '3' });

    expect(await first.ownerCheck.consume('k')).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    expect(await second.ownerCheck.consume('k')).toMatchObject({ allowed: true, remaining: 1 });
    const refused = await second.ownerCheck.consume('k', 2);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.resetSeconds).toBeLessThanOrEqual(60);
  });

  it('keeps owner-check and profile budgets under separate keys', async () => {
    const prefix = uniquePrefix();
    const limits = limitsOn(url, prefix, captureLog(), { OWNER_CHECK_LIMIT: '1', PROFILE_LIMIT: '5' });

    await limits.ownerCheck.consume('203.0.113.7');
    expect((await limits.ownerCheck.consume('203.0.113.7')).allowed).toBe(false);
    expect(await limits.profile?.consume('203.0.113.7')).toMatchObject({ allowed: true, remaining: 4 });

    expect(await raw.get(`${prefix}:owner-check:203.0.113.7`)).toBe('2');
    expect(await raw.get(`${prefix}:profile:203.0.113.7`)).toBe('1');
  });

  it('lets a counter expire with the window', async () => {
    const prefix = uniquePrefix();
    const limits = limitsOn(url, prefix);
    await limits.ownerCheck.consume('203.0.113.8');
    const ttl = await raw.ttl(`${prefix}:owner-check:203.0.113.8`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it('keeps counters under the documented key names by default', async () => {
    // A client key of its own, so earlier runs (counters live 60 s) cannot interfere.
    const client = `test-client-${randomUUID()}`;
    const config = loadConfig({ NODE_ENV: 'test', REDIS_URL: url });
    const limits = createRateLimits(config, captureLog().logger);
    opened.push(limits);
    await limits.ownerCheck.consume(client);
    await limits.profile?.consume(client, 2);
    expect(await raw.get(`${DEFAULT_KEY_PREFIX}:owner-check:${client}`)).toBe('1');
    expect(await raw.get(`nps:rl:profile:${client}`)).toBe('2');
  });

  it('logs that limits are in Redis once connected, without credentials', async () => {
    const log = captureLog();
    const limits = limitsOn(url, uniquePrefix(), log);
    await limits.ownerCheck.consume('k');
    expect(log.find('info', 'rate limits are kept in Redis')).toHaveLength(1);
    expect(log.find('warn', '')).toHaveLength(0);
  });

  it('close() quits the connection', async () => {
    const connection = connectRedis(url, captureLog().logger);
    await connection.started;
    expect(connection.isReady()).toBe(true);
    await connection.close();
    expect(connection.client.status).toBe('end');
  });
});

describe('Redis unreachable', () => {
  it('answers quickly and limits in memory when REDIS_URL points at a dead port', async () => {
    const port = await freePort();
    const log = captureLog();
    const limits = limitsOn(`redis://limits:s3cret-pass@127.0.0.1:${port}`, uniquePrefix(), log);

    const allowed = await alternate([limits.ownerCheck], '203.0.113.9', 12);

    expect(allowed).toEqual([...Array<boolean>(10).fill(true), false, false]);
    expect(await boundedConsume(limits.profile as RateLimiter, '203.0.113.9')).toMatchObject({ allowed: true });
    // One line for the operator, however many requests and reconnection attempts.
    expect(log.find('warn', 'Redis unreachable at start')).toHaveLength(1);
    expect(log.find('warn', 'Redis')).toHaveLength(1);
    expect(log.find('warn', 'Redis')[0]?.redis).toBe(`127.0.0.1:${port}`);
    expect(JSON.stringify(log.lines)).not.toContain('s3cret-pass');
  });

  it('closes without waiting for Redis and stops trying to reconnect', async () => {
    const port = await freePort();
    const log = captureLog();
    const connection = connectRedis(`redis://127.0.0.1:${port}`, log.logger);
    await connection.started;
    expect(connection.isReady()).toBe(false);
    await eventually(() => log.find('debug', 'Redis error').length >= 2, 'a reconnection attempt');

    await connection.close();
    const attemptsAtClose = log.find('debug', 'Redis error').length;
    // An attempt that does not come has no event: ioredis leaves the status at 'reconnecting'
    // after a close between attempts. The next attempt would come within the longest delay
    // between attempts, so the window is one such delay (and some).
    await new Promise((resolve) => setTimeout(resolve, REDIS_MAX_RECONNECT_DELAY_MS + 500));
    expect(log.find('debug', 'Redis error')).toHaveLength(attemptsAtClose);
  });
});

describe.skipIf(SHARED_REDIS === undefined)(
  'Redis stopped and started (needs TEST_REDIS_URL; skipped without it)',
  () => {
    let redis: ThrowawayRedis | undefined;
    afterEach(async () => {
      await redis?.kill();
      redis = undefined;
    });

    it('keeps answering and limiting while Redis is down, and shares the budget again once it is back', async () => {
      redis = await throwawayRedis();
      await redis.start();
      const prefix = uniquePrefix();
      const logs = [captureLog(), captureLog()];
      const processes = logs.map((log) => limitsOn((redis as ThrowawayRedis).url, prefix, log));
      const limiters = processes.map((limits) => limits.ownerCheck);

      // Up: both processes draw on the counter in Redis.
      expect(await alternate(limiters, 'before', 4)).toEqual([true, true, true, true]);
      const probe = new Redis(redis.url);
      expect(await probe.get(`${prefix}:owner-check:before`)).toBe('4');
      probe.disconnect();

      // Redis dies while requests are in flight: none of them fails.
      const inFlight = Array.from({ length: 50 }, (_, i) =>
        (limiters[i % 2] as RateLimiter).consume(`during-${i % 5}`),
      );
      await redis.kill();
      const settled = await Promise.allSettled(inFlight);
      expect(settled.filter((result) => result.status === 'rejected')).toEqual([]);

      // Down: each process keeps answering, within the bound, and keeps limiting in memory.
      for (const limiter of limiters) {
        const allowed = await alternate([limiter], 'while-down', 12);
        expect(allowed).toEqual([...Array<boolean>(10).fill(true), false, false]);
      }
      for (const log of logs) expect(log.find('warn', 'Redis connection lost')).toHaveLength(1);

      // Back on the same port: both processes reconnect by themselves and share one budget again.
      await redis.start();
      await eventually(
        () => logs.every((log) => log.find('warn', 'Redis connection restored').length === 1),
        'reconnection',
      );
      expect(await alternate(limiters, 'after', 12)).toEqual([...Array<boolean>(10).fill(true), false, false]);
      const probeAfter = new Redis(redis.url);
      expect(await probeAfter.get(`${prefix}:owner-check:after`)).toBe('12');
      probeAfter.disconnect();
      for (const log of logs) expect(log.find('warn', 'Redis')).toHaveLength(2);
    });

    it('stops asking a hung Redis after a few timeouts, limits in memory meanwhile, and shares again once it answers', async () => {
      const server = await throwawayRedis();
      redis = server;
      await server.start();
      const prefix = uniquePrefix();
      const logs = [captureLog(), captureLog()];
      const limiters = logs.map((log) => limitsOn(server.url, prefix, log, { OWNER_CHECK_LIMIT: '3' }).ownerCheck);
      expect(await alternate(limiters, 'warm-up', 2)).toEqual([true, true]);

      // Hung: connections stay open, nothing is answered. Requests keep coming to both processes;
      // the first ones wait for the command timeout, until each process trips.
      server.freeze();
      let sentToRedis = 0;
      try {
        const tripping = await Promise.all(
          limiters.map((limiter, i) =>
            consumeUntil(limiter, 'tripping', () => (logs[i] as CapturedLog).find('warn', 'Redis').length > 0),
          ),
        );
        for (const { slow } of tripping) {
          expect(slow).toBeGreaterThan(0);
          expect(slow).toBeLessThanOrEqual(4);
          sentToRedis += slow;
        }

        // Tripped: answered at once, still limited, in each process's memory.
        for (const limiter of limiters) {
          const answers = await timedConsumes(limiter, 'while-hung', 5);
          expect(answers.map((answer) => answer.allowed)).toEqual([true, true, true, false, false]);
          expect(totalMs(answers)).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS);
        }
        // Meanwhile each process probes Redis in the background (the trip and two failed probes
        // are three errors at debug), requests do not wait for the probes, and nothing more is
        // logged at warn.
        await eventually(() => logs.every((log) => log.find('debug', 'Redis error').length >= 3), 'probes');
        expect(totalMs(await timedConsumes(limiters[0] as RateLimiter, 'still-hung', 3))).toBeLessThan(
          REDIS_COMMAND_TIMEOUT_MS,
        );
        for (const log of logs) {
          expect(log.find('warn', 'Redis')).toHaveLength(1);
          expect(log.find('warn', 'Redis not answering')).toHaveLength(1);
        }
      } finally {
        server.thaw();
      }

      // Answering again: each process notices by itself, and the budget is one again.
      await eventually(() => logs.every((log) => log.find('info', 'Redis answering again').length === 1), 'recovery');
      expect(await alternate(limiters, 'after', 5)).toEqual([true, true, true, false, false]);
      const probe = new Redis(server.url);
      try {
        expect(await probe.get(`${prefix}:owner-check:after`)).toBe('5');
        // Commands that timed out were answered from memory: none is sent to Redis a second time.
        expect(Number(await probe.get(`${prefix}:owner-check:tripping`))).toBeLessThanOrEqual(sentToRedis);
      } finally {
        probe.disconnect();
      }
      for (const log of logs) expect(log.find('warn', 'Redis')).toHaveLength(1);
    });

    it('starts without Redis and moves to it once it is reachable', async () => {
      redis = await throwawayRedis();
      const log = captureLog();
      const prefix = uniquePrefix();
      const limits = limitsOn(redis.url, prefix, log);

      expect((await boundedConsume(limits.ownerCheck, 'early')).allowed).toBe(true);
      expect(log.find('warn', 'Redis unreachable at start')).toHaveLength(1);

      await redis.start();
      await eventually(() => log.find('warn', 'Redis connection restored').length === 1, 'connection');
      await limits.ownerCheck.consume('late');
      const probe = new Redis(redis.url);
      expect(await probe.get(`${prefix}:owner-check:late`)).toBe('1');
      probe.disconnect();
    });
  },
);
