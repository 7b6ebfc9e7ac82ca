/**
 * When a failed webhook delivery is tried again (WEBHOOK_RETRY_SCHEDULE, default
 * `5s,5m,30m,2h,5h,10h,10h`): after each step, with ±10 % jitter so that the retries of one
 * outage do not come back all at once, and never sooner than a 429's or 503's `Retry-After`.
 * After the last step the event has failed. The setting is read by src/config/config.ts.
 */

const JITTER = 0.1;

/**
 * The wait before attempt `attempt + 1` after attempt `attempt` failed (attempts count from 1),
 * or undefined when the schedule is over. `retryAfterMs` is the answer's Retry-After.
 */
export function retryDelayMs(
  schedule: readonly number[],
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  const step = schedule[attempt - 1];
  if (step === undefined) return undefined;
  const jittered = Math.round(step * (1 - JITTER + 2 * JITTER * random()));
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** A Retry-After header in milliseconds from `now`: seconds, or an HTTP date; undefined otherwise. */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (/^[0-9]{1,9}$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(date - now, 0);
}
