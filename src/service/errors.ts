/**
 * The service's error model: what a caller did wrong or why it cannot be answered now, in the
 * contract's words. The HTTP adapters map these and nothing else: REST to a status code,
 * GraphQL to `extensions.code`. `asServiceError` is the one classifier of what was thrown: a
 * database that cannot answer is an UnavailableError wherever it surfaces; anything else thrown
 * below the service is unexpected (a 500 / INTERNAL_SERVER_ERROR, masked, and logged with
 * `describeFailure`).
 *
 * An error raised after a rate-limit budget was drawn on carries that decision, so REST can
 * send the RateLimit-* headers with the error answer too.
 */
import { describeDatabaseError, isDatabaseUnavailable } from '../db/driver-errors.js';
import { type RateLimitDecision, tooManyRequestsMessage } from '../limits/rate-limit.js';

/** Seconds a client should wait before retrying while the database is unavailable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export const SERVICE_UNAVAILABLE_MESSAGE = 'Service unavailable';
/** What a client sees of an unexpected failure, on either surface. */
export const INTERNAL_SERVER_ERROR_MESSAGE = 'Internal server error';

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

/**
 * What was thrown, in the service's terms: a service error as it is; a database that cannot
 * answer (wherever it surfaced, e.g. a field resolved outside the service's reads) as an
 * UnavailableError; undefined for anything else, which is unexpected.
 */
export function asServiceError(error: unknown): ServiceError | undefined {
  if (error instanceof ServiceError) return error;
  return isDatabaseUnavailable(error) ? new UnavailableError(error) : undefined;
}

/**
 * A line for logs that says what failed without the SQL or its parameters (which can hold
 * private e-mails): the innermost cause's code and message.
 */
export function describeFailure(error: unknown): string {
  return describeDatabaseError(error);
}
