/**
 * The Redis connection behind the shared rate limits. It is tuned to fail fast rather than to
 * queue: a limiter that waits for Redis would make every request wait with it, while a limiter
 * that gets an immediate error can answer from its in-memory insurance instead. A Redis that
 * hangs is dropped by the circuit breaker (redis-breaker.ts) and then treated like one that is
 * down.
 *
 * Each transition is logged once, never per request: connection loss (warn) and recovery
 * (warn), a trip of the breaker (warn) and its closing (info).
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../logging/logger.js';
import { breakerOptions, isTrip, REDIS_TRIP_AFTER_SILENCE_MS } from './redis-breaker.js';

/** How long one connection attempt may take before it counts as failed. */
const REDIS_CONNECT_TIMEOUT_MS = 1_000;
/** How long one command may take; past it the limiter answers from memory, so no request hangs on Redis. */
export const REDIS_COMMAND_TIMEOUT_MS = 500;
/** Upper bound between reconnection attempts, so Redis is used again within seconds of coming back. */
export const REDIS_MAX_RECONNECT_DELAY_MS = 2_000;

export interface RedisConnection {
  readonly client: Redis;
  /**
   * Settles once the first connection attempt has succeeded or failed (or took longer than the
   * connect timeout). Limiters wait for it, so the first requests after start-up use Redis when
   * it is there instead of a fresh per-process budget. Never rejects.
   */
  readonly started: Promise<void>;
  /** True while commands can be sent. */
  isReady(): boolean;
  /** Quits (or drops) the connection and stops reconnecting. */
  close(): Promise<void>;
}

function redisOptions(): RedisOptions {
  return {
    // Commands issued while disconnected fail at once instead of piling up in memory.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    // Keep reconnecting for as long as the process lives; the limiters answer from memory meanwhile.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, REDIS_MAX_RECONNECT_DELAY_MS),
    ...breakerOptions(),
  };
}

/** `redis://user:secret@host:6379/0` → `host:6379`: enough to act on, no credentials in logs. */
function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port === '' ? '6379' : parsed.port}`;
  } catch {
    return 'redis (unparseable URL)';
  }
}

export function connectRedis(url: string, logger: Logger): RedisConnection {
  const client = new Redis(url, redisOptions());
  const where = describeRedisUrl(url);
  // 'starting' until the first attempt settles; afterwards each transition is logged once.
  // 'hung': the breaker dropped a connection that stopped answering (redis-breaker.ts).
  let state: 'starting' | 'up' | 'down' | 'hung' = 'starting';
  let closing = false;

  let settleStart: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    settleStart = resolve;
  });
  const startTimer = setTimeout(() => settleStart(), REDIS_CONNECT_TIMEOUT_MS);
  startTimer.unref();

  const wentDown = (reason: string) => {
    settleStart();
    if (closing || state === 'down' || state === 'hung') return;
    const wasUp = state === 'up';
    state = 'down';
    logger.warn(
      { redis: where, reason },
      wasUp
        ? 'Redis connection lost: rate limits are counted per process until it returns'
        : 'Redis unreachable at start: rate limits are counted per process until it is reachable',
    );
  };

  const tripped = () => {
    if (closing || state !== 'up') return;
    state = 'hung';
    logger.warn(
      { redis: where, silentMs: REDIS_TRIP_AFTER_SILENCE_MS },
      'Redis not answering: rate limits are counted per process until it answers again',
    );
  };

  client.on('ready', () => {
    settleStart();
    if (state === 'down') logger.warn({ redis: where }, 'Redis connection restored: rate limits are shared again');
    else if (state === 'hung') logger.info({ redis: where }, 'Redis answering again: rate limits are shared again');
    else if (state === 'starting') logger.info({ redis: where }, 'rate limits are kept in Redis');
    state = 'up';
  });
  // Without an 'error' listener ioredis prints every failed reconnection attempt itself.
  client.on('error', (error: Error) => {
    // ioredis reports the trip as an error before it closes the connection.
    if (isTrip(error)) tripped();
    wentDown(error.message);
    logger.debug({ redis: where, err: error.message }, 'Redis error');
  });
  client.on('close', () => wentDown('connection closed'));

  return {
    client,
    started,
    isReady: () => client.status === 'ready',
    async close() {
      closing = true;
      clearTimeout(startTimer);
      settleStart();
      // Between reconnection attempts there is no socket: cancelling the next attempt is all.
      const hasSocket = client.status !== 'end' && client.status !== 'reconnecting' && client.status !== 'wait';
      const ended = hasSocket ? endOf(client) : Promise.resolve();
      if (client.status === 'ready') {
        // QUIT lets Redis finish what it has; a connection that cannot say goodbye is dropped.
        await client.quit().catch(() => client.disconnect());
      } else {
        client.disconnect();
      }
      await ended;
    },
  };
}

/** Resolves when the client has closed its socket for good, or after the connect timeout. */
function endOf(client: Redis): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, REDIS_CONNECT_TIMEOUT_MS);
    timer.unref();
    client.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
