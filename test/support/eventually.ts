/**
 * The one way tests wait for something that happens by itself: a condition checked until it
 * holds, with a bound that only turns a wait that never ends into a failure that says what was
 * awaited. A test never sleeps for a fixed time and then asserts: on a busy machine any fixed
 * time is too short, and on a quiet one it is time wasted. The bound is generous on purpose; a
 * wait that ends at all ends far sooner.
 */

export interface EventuallyOptions {
  /** What is awaited, for the failure message ("the pool's connections closed"). */
  what: string;
  /** Give up after this long. */
  withinMs?: number;
  /** Time between checks. */
  everyMs?: number;
}

const DEFAULT_WITHIN_MS = 15_000;
const DEFAULT_EVERY_MS = 50;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves with the first value of `check` that is neither false, null nor undefined. A check
 * that throws or rejects counts as "not yet"; its last error is in the failure message.
 */
export async function eventually<T>(
  check: () => T | PromiseLike<T>,
  options: EventuallyOptions | string,
): Promise<Exclude<T, false | null | undefined>> {
  const {
    what,
    withinMs = DEFAULT_WITHIN_MS,
    everyMs = DEFAULT_EVERY_MS,
  } = typeof options === 'string' ? { what: options } : options;
  const deadline = performance.now() + withinMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false && value !== null && value !== undefined)
        return value as Exclude<T, false | null | undefined>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() >= deadline) {
      const reason = lastError === undefined ? '' : ` (last check failed: ${String(lastError)})`;
      throw new Error(`${what}: not within ${withinMs} ms${reason}`);
    }
    await pause(everyMs);
  }
}

/**
 * Checks a promise of the form "a change is seen within `boundMs`" in a way load cannot break:
 * what the service promises is that a request it receives `boundMs` after the change answers with
 * the change, and a request cannot reach the service before the client sent it. So requests are
 * sent one after another from `since` on, and every one *sent* at least `boundMs` after `since`
 * must be `seen`; however slowly each answer comes back, a late answer does not fail the check,
 * and a request sent late that still misses the change does. Resolves with the first time, from
 * `since`, a request was sent whose answer showed the change.
 */
export async function expectSeenFrom(
  since: number,
  boundMs: number,
  request: () => Promise<boolean>,
  what: string,
): Promise<number> {
  let firstSeenSentAfter: number | undefined;
  for (;;) {
    const sentAfter = Date.now() - since;
    const seen = await request();
    if (seen && firstSeenSentAfter === undefined) firstSeenSentAfter = sentAfter;
    if (sentAfter >= boundMs) {
      if (!seen) throw new Error(`${what}: a request sent ${sentAfter} ms after the change did not show it`);
      return firstSeenSentAfter ?? sentAfter;
    }
  }
}
