/**
 * How GraphQL errors of the fixed operations become REST answers: the `extensions.code` of the
 * first error decides the status, and the message is the contract's.
 */
import type { GraphQLError } from 'graphql';
import { isDatabaseUnavailable } from '../db/errors.js';
import { tooManyRequestsMessage } from '../limits/rate-limit.js';

export interface RestError {
  status: number;
  message: string;
  retryAfterSeconds?: number;
}

/** Seconds a client should wait before retrying while the database is unavailable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** The error's code; errors thrown past the resolvers' own checks have none and are classified here. */
function codeOf(error: GraphQLError): unknown {
  if (error.extensions.code !== undefined) return error.extensions.code;
  return isDatabaseUnavailable(error.originalError) ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_SERVER_ERROR';
}

export function restErrorOf(errors: readonly GraphQLError[]): RestError {
  const [error] = errors;
  const code = error === undefined ? undefined : codeOf(error);
  switch (code) {
    case 'BAD_USER_INPUT':
      return { status: 400, message: error!.message };
    case 'RATE_LIMITED': {
      const retryAfter = Number(error!.extensions.retryAfter);
      const seconds = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.ceil(retryAfter) : 1;
      return { status: 429, message: tooManyRequestsMessage(seconds), retryAfterSeconds: seconds };
    }
    case 'SERVICE_UNAVAILABLE':
      return { status: 503, message: 'Service unavailable', retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS };
    default:
      return { status: 500, message: 'Internal server error' };
  }
}
