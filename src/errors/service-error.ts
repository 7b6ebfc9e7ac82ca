/**
 * The base of the service's error model (src/service/errors.ts) and the one error of it that the
 * database handle raises itself: UnavailableError. It lives beneath the layers, as the profile
 * model and the name rules do, so that the database layer can raise what the service answers
 * with (a 503, SERVICE_UNAVAILABLE) without importing the service (docs/design.md, "Errors").
 */
import type { RateLimitDecision } from '../limits/rate-limit.js';

/** Seconds a client should wait before retrying while the database is unavailable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export const SERVICE_UNAVAILABLE_MESSAGE = 'Service unavailable';

export abstract class ServiceError extends Error {
  constructor(
    message: string,
    /** The budget decision of the call that failed, when it drew on one. */
    readonly rateLimit: RateLimitDecision | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The database cannot answer now; the cause stays in `cause` (never shown to clients). Raised by
 * the database handle's reads (src/db/driver-errors.ts, `raiseUnavailable`), which know nothing of
 * budgets: the service hands its callers `withRateLimit` of it.
 */
export class UnavailableError extends ServiceError {
  override readonly name = 'UnavailableError';
  readonly retryAfterSeconds = UNAVAILABLE_RETRY_AFTER_SECONDS;

  constructor(cause: unknown, rateLimit?: RateLimitDecision) {
    super(SERVICE_UNAVAILABLE_MESSAGE, rateLimit, { cause });
  }

  /**
   * This failure as the answer of a call that drew `rateLimit`. A copy, not this error changed:
   * one failed statement fails every request batched into it, each with its own budget.
   */
  withRateLimit(rateLimit: RateLimitDecision | undefined): UnavailableError {
    return rateLimit === undefined ? this : new UnavailableError(this.cause, rateLimit);
  }
}
