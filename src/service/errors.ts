/**
 * The service's error model: what a caller did wrong or why it cannot be answered now, in the
 * contract's words. The HTTP adapters map these and nothing else: REST to a status code,
 * GraphQL to `extensions.code`. Anything else thrown below the service is unexpected (a 500 /
 * INTERNAL_SERVER_ERROR, masked).
 *
 * An error raised after a rate-limit budget was drawn on carries that decision, so REST can
 * send the RateLimit-* headers with the error answer too.
 */
import { type RateLimitDecision, tooManyRequestsMessage } from '../limits/rate-limit.js';

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

/** The input breaks a rule of the contract; the message is the contract's. */
export class InvalidInputError extends ServiceError {
  override readonly name = 'InvalidInputError';

  constructor(
    message: string,
    rateLimit?: RateLimitDecision,
    /** Machine-readable details, e.g. which of several names is invalid. */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message, rateLimit);
  }
}

/** The client used up a budget. */
export class RateLimitedError extends ServiceError {
  override readonly name = 'RateLimitedError';

  constructor(decision: RateLimitDecision) {
    super(tooManyRequestsMessage(decision.resetSeconds), decision);
  }

  get retryAfterSeconds(): number {
    return this.rateLimit?.resetSeconds ?? 1;
  }
}

/** The database cannot answer now; the cause stays in `cause` (never shown to clients). */
export class UnavailableError extends ServiceError {
  override readonly name = 'UnavailableError';
  readonly retryAfterSeconds = UNAVAILABLE_RETRY_AFTER_SECONDS;

  constructor(cause: unknown, rateLimit?: RateLimitDecision) {
    super(SERVICE_UNAVAILABLE_MESSAGE, rateLimit, { cause });
  }
}
