/**
 * The errors of the GraphQL API and how unexpected failures are masked. Every error a client sees
 * carries `extensions.code`: BAD_USER_INPUT, RATE_LIMITED (with `retryAfter`), SERVICE_UNAVAILABLE
 * or INTERNAL_SERVER_ERROR. The REST shim reads the same codes, so both surfaces agree.
 */
import { GraphQLError } from 'graphql';
import { describeDatabaseError, isDatabaseUnavailable } from '../db/errors.js';
import { tooManyRequestsMessage } from '../limits/rate-limit.js';

export const ERROR_CODES = {
  badUserInput: 'BAD_USER_INPUT',
  rateLimited: 'RATE_LIMITED',
  serviceUnavailable: 'SERVICE_UNAVAILABLE',
  internalServerError: 'INTERNAL_SERVER_ERROR',
} as const;

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

export const SERVICE_UNAVAILABLE_MESSAGE = 'Service unavailable';
export const INTERNAL_SERVER_ERROR_MESSAGE = 'Internal server error';

export function badUserInputError(message: string, details: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ERROR_CODES.badUserInput, ...details } });
}

export function rateLimitedError(retryAfterSeconds: number): GraphQLError {
  return new GraphQLError(tooManyRequestsMessage(retryAfterSeconds), {
    extensions: { code: ERROR_CODES.rateLimited, retryAfter: retryAfterSeconds },
  });
}

/**
 * The database cannot answer now. The driver's error is deliberately not attached: its message
 * holds the SQL and parameters, and an error without an original error passes masking as is.
 */
export function serviceUnavailableError(): GraphQLError {
  return new GraphQLError(SERVICE_UNAVAILABLE_MESSAGE, { extensions: { code: ERROR_CODES.serviceUnavailable } });
}

export function isGraphQLError(value: unknown): value is GraphQLError {
  return value instanceof GraphQLError;
}

/** The innermost non-GraphQL error behind `error`: what actually went wrong. */
export function rootCause(error: unknown): unknown {
  let current = error;
  while (isGraphQLError(current) && current.originalError != null) current = current.originalError;
  return current;
}

/**
 * Errors raised on purpose: by the resolvers, or by graphql-js and Yoga themselves (syntax,
 * validation, HTTP). They wrap no other error; a thrown driver or programming error always does.
 */
function isIntendedError(error: unknown): error is GraphQLError {
  return isGraphQLError(error) && isGraphQLError(rootCause(error));
}

/**
 * A line for logs that says what failed without the SQL or its parameters (which can hold
 * private e-mails): the error's name and the driver's code and message.
 */
export function describeErrorForLog(error: unknown): string {
  const cause = rootCause(error);
  const name = cause instanceof Error ? cause.name : typeof cause;
  return `${name}: ${describeDatabaseError(cause)}`;
}

/**
 * graphql-js reports a few client mistakes while executing, without a code: a variable that is
 * missing or has the wrong type, an operation type the schema has no root for. They are about
 * the client's input, so they get BAD_USER_INPUT, and every error a client sees has a code.
 */
function withClientErrorCode(error: GraphQLError): GraphQLError {
  if (error.extensions.code !== undefined) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code: ERROR_CODES.badUserInput },
  });
}

export interface MaskOptions {
  /** Production hides even the sanitised description of an unexpected error. */
  production: boolean;
}

/**
 * What a client may see of an error: intended errors as they are; a database that cannot answer
 * as SERVICE_UNAVAILABLE; anything else as INTERNAL_SERVER_ERROR without SQL or stack.
 */
export function maskError(error: unknown, options: MaskOptions): GraphQLError {
  if (isIntendedError(error)) return withClientErrorCode(error);
  const located = isGraphQLError(error) ? error : undefined;
  const cause = rootCause(error);
  const position = {
    nodes: located?.nodes,
    source: located?.source,
    positions: located?.positions,
    path: located?.path,
  };
  if (isDatabaseUnavailable(cause)) {
    return new GraphQLError(SERVICE_UNAVAILABLE_MESSAGE, {
      ...position,
      extensions: { code: ERROR_CODES.serviceUnavailable },
    });
  }
  return new GraphQLError(INTERNAL_SERVER_ERROR_MESSAGE, {
    ...position,
    extensions: {
      code: ERROR_CODES.internalServerError,
      ...(options.production ? {} : { detail: describeErrorForLog(cause) }),
      // Yoga's HTTP status for the request (e.g. 400 for an unreadable body) stays as Yoga chose.
      ...(located?.extensions.http === undefined ? {} : { http: located.extensions.http }),
    },
  });
}
