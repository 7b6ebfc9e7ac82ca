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

/**
 * A Retry-After header in milliseconds from `now`: seconds, or an HTTP date; undefined otherwise.
 * At most `ceilingMs` (WEBHOOK_DISABLE_AFTER): a receiver asking for years would otherwise hold
 * its events, and every newer change of their names, without ever failing long enough to be
 * disabled.
 */
export function retryAfterMs(header: string | undefined, now: number, ceilingMs: number): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  let wait: number | undefined;
  if (/^[0-9]+$/.test(value)) wait = Number(value) * 1000;
  // An HTTP date as senders write it (IMF-fixdate): Date.parse alone reads "1.5" as a date.
  else if (/^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/.test(value)) {
    const date = Date.parse(value);
    wait = Number.isNaN(date) ? undefined : Math.max(date - now, 0);
  }
  return wait === undefined ? undefined : Math.min(wait, ceilingMs);
}
