/**
 * The circuit breaker between the rate limits and a Redis that hangs: one whose connections stay
 * open but answer nothing (stopped by SIGSTOP, stuck in a slow disk write, cut off behind a
 * firewall that drops packets). Without it every rate-limited request waits the command timeout
 * before its limiter answers from memory, and the service slows to that pace.
 *
 * It is built from ioredis's own connection states rather than a second state machine:
 *
 * - **Trip.** ioredis's `socketTimeout` drops the connection once Redis has sent nothing for
 *   REDIS_TRIP_AFTER_SILENCE_MS while commands wait for it: three command timeouts in a row for
 *   requests that come one after another, however many wait at once.
 * - **Open.** The connection is then not `ready`, so `RateLimiterRedis` (`rejectIfRedisNotReady`)
 *   hands every request to its in-memory insurance limiter at once: exactly what happens when
 *   Redis is down or refuses connections.
 * - **Probe.** ioredis reconnects in the background (redis-connection.ts's retry strategy: 0.1 s
 *   more per attempt, at most 2 s). A hung server's kernel still accepts connections, so each
 *   attempt sends the connection handshake (HELLO, CLIENT SETINFO); unanswered, the attempt fails
 *   and its socket is dropped after REDIS_TRIP_AFTER_SILENCE_MS. Attempts therefore start every
 *   few seconds, further apart as the hang lasts (docs/decisions.md, "The Redis breaker's
 *   probes"). No request waits for a probe.
 * - **Close.** The handshake is answered: the connection is `ready` and the next request counts in
 *   Redis again.
 */
import type { RedisOptions } from 'ioredis';

/** Redis silent this long while commands wait for it: the connection is dropped (tripped). */
export const REDIS_TRIP_AFTER_SILENCE_MS = 1_500;

/** The ioredis options that make the breaker (see above). */
export function breakerOptions(): Pick<RedisOptions, 'socketTimeout' | 'autoResendUnfulfilledCommands'> {
  return {
    socketTimeout: REDIS_TRIP_AFTER_SILENCE_MS,
    // By default ioredis sends the commands of a dropped connection again once it reconnects.
    // A rate-limit command that timed out was already answered from memory; sent again after a
    // hang it would charge its client twice in the shared counter.
    autoResendUnfulfilledCommands: false,
  };
}

/** Whether `error` is ioredis dropping a connection because Redis stopped answering (a trip). */
export function isTrip(error: Error): boolean {
  // ioredis 6: "Socket timeout. Expecting data, but didn't receive any in 1500ms."
  return error.message.startsWith('Socket timeout');
}
