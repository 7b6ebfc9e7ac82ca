/**
 * The service's error model: what a caller did wrong or why it cannot be answered now, in the
 * contract's words. The HTTP adapters map these and nothing else: REST to a status code,
 * GraphQL to `extensions.code`. The base class and UnavailableError live beneath the layers
 * (src/errors/service-error.ts), because the database handle raises UnavailableError itself;
 * this module is where the adapters find the whole model. Anything else thrown below the service
 * is unexpected (a 500 / INTERNAL_SERVER_ERROR, masked, and logged with `describeFailure`).
 *
 * An error raised after a rate-limit budget was drawn on carries that decision, so REST can
 * send the RateLimit-* headers with the error answer too.
 */
import { ServiceError } from '../errors/service-error.js';
import { type RateLimitDecision, tooManyRequestsMessage } from '../limits/rate-limit.js';

export { describeFailure } from '../errors/cause-chain.js';
export {
  SERVICE_UNAVAILABLE_MESSAGE,
  ServiceError,
  UNAVAILABLE_RETRY_AFTER_SECONDS,
  UnavailableError,
} from '../errors/service-error.js';

/** What a client sees of an unexpected failure, on either surface. */
export const INTERNAL_SERVER_ERROR_MESSAGE = 'Internal server error';

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

/** A change-log cursor names entries the log no longer keeps (REST 410, GraphQL CURSOR_EXPIRED). */
export class CursorExpiredError extends ServiceError {
  override readonly name = 'CursorExpiredError';

  constructor(rateLimit?: RateLimitDecision) {
    super('Cursor is older than the change log keeps', rateLimit);
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

/** What was thrown, in the service's terms: a service error as it is; undefined for anything else, which is unexpected. */
export function asServiceError(error: unknown): ServiceError | undefined {
  return error instanceof ServiceError ? error : undefined;
}
