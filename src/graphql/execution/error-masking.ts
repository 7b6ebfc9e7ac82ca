/**
 * What GraphQL clients see of errors. Every error carries `extensions.code`: the service's errors
 * map to BAD_USER_INPUT, CURSOR_EXPIRED, RATE_LIMITED (with `retryAfter`) and SERVICE_UNAVAILABLE,
 * the same errors REST maps to 400, 410, 429 and 503; anything unexpected is masked as INTERNAL_SERVER_ERROR
 * without SQL, parameters or stack.
 */
import { GraphQLError, Source } from 'graphql';
import { innermostCause } from '../../errors/cause-chain.js';
import {
  asServiceError,
  CursorExpiredError,
  describeFailure,
  INTERNAL_SERVER_ERROR_MESSAGE,
  InvalidInputError,
  RateLimitedError,
  ServiceError,
  UnavailableError,
} from '../../service/errors.js';

export const ERROR_CODES = {
  badUserInput: 'BAD_USER_INPUT',
  cursorExpired: 'CURSOR_EXPIRED',
  rateLimited: 'RATE_LIMITED',
  serviceUnavailable: 'SERVICE_UNAVAILABLE',
  internalServerError: 'INTERNAL_SERVER_ERROR',
} as const;

function isGraphQLError(value: unknown): value is GraphQLError {
  return value instanceof GraphQLError;
}

/** The innermost non-GraphQL error behind `error`: what actually went wrong. */
function rootCause(error: unknown): unknown {
  // GraphQL 16 wraps through `originalError`, not `cause`.
  return innermostCause(error, (link) => (isGraphQLError(link) ? link.originalError : undefined));
}

/**
 * A line for logs that says what failed without the SQL or its parameters (which can hold
 * private e-mails): the error's name and the driver's code and message.
 */
export function describeErrorForLog(error: unknown): string {
  const cause = rootCause(error);
  const name = cause instanceof Error ? cause.name : typeof cause;
  return `${name}: ${describeFailure(cause)}`;
}

/**
 * SERVICE_UNAVAILABLE, with the seconds to wait as REST's 503 has them: in the error and as the
 * answer's `Retry-After` header. The status stays as GraphQL over HTTP wants it for an executed
 * operation (2xx: the other fields of the document may have answered).
 */
function unavailableExtensions(retryAfterSeconds: number): Record<string, unknown> {
  return {
    code: ERROR_CODES.serviceUnavailable,
    retryAfter: retryAfterSeconds,
    http: { headers: { 'Retry-After': String(retryAfterSeconds) } },
  };
}

/** The code and extensions a service error has for GraphQL clients. */
function serviceErrorExtensions(error: ServiceError): Record<string, unknown> {
  if (error instanceof RateLimitedError) return { code: ERROR_CODES.rateLimited, retryAfter: error.retryAfterSeconds };
  if (error instanceof UnavailableError) return unavailableExtensions(error.retryAfterSeconds);
  if (error instanceof CursorExpiredError) return { code: ERROR_CODES.cursorExpired };
  const details = error instanceof InvalidInputError ? error.details : {};
  return { code: ERROR_CODES.badUserInput, ...details };
}

export interface MaskOptions {
  /** Production hides even the sanitised description of an unexpected error. */
  production: boolean;
}

/**
 * What a client may see of an error: the service's errors with their codes; errors raised by
 * graphql-js and Yoga themselves (syntax, validation, HTTP) as they are, with BAD_USER_INPUT
 * when they have no code (a missing variable, an unsupported operation type: the client's
 * input); whatever the service's classifier (`asServiceError`) calls a service error with its
 * code; anything else as INTERNAL_SERVER_ERROR.
 */
export function maskError(error: unknown, options: MaskOptions): GraphQLError {
  return maskedError(error, options, positionOf(error));
}

interface Position {
  nodes?: GraphQLError['nodes'];
  source?: Source;
  positions?: readonly number[];
  path?: GraphQLError['path'];
}

/**
 * Where in the document an error happened, in the form graphql-js (and Yoga, which rebuilds
 * every error from it) computes `locations` from. Compiled execution (graphql-jit) reports only
 * the line and column of the field: a source of blank lines puts positions exactly there, so its
 * errors have the same locations as those of graphql-js.
 */
function positionOf(error: unknown): Position {
  if (isGraphQLError(error) && (error.nodes !== undefined || error.source !== undefined)) {
    return { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path };
  }
  const path = (error as { path?: GraphQLError['path'] } | null)?.path;
  const locations = (error as { locations?: unknown } | null)?.locations;
  if (!Array.isArray(locations) || locations.length === 0) return { path };
  const points = locations as Array<{ line: number; column: number }>;
  const width = Math.max(...points.map((point) => point.column));
  const lines = Math.max(...points.map((point) => point.line));
  const source = new Source(`${' '.repeat(width)}\n`.repeat(lines));
  return { source, positions: points.map((point) => (point.line - 1) * (width + 1) + point.column - 1), path };
}

function maskedError(error: unknown, options: MaskOptions, position: Position): GraphQLError {
  const located = isGraphQLError(error) ? error : undefined;
  const cause = rootCause(error);
  if (isGraphQLError(cause)) {
    const visible = located ?? cause;
    const { originalError: quotesTheBody, ...extensions } = visible.extensions;
    if (visible.extensions.code !== undefined && quotesTheBody === undefined) return visible;
    if (quotesTheBody !== undefined) {
      // Yoga describes an unreadable body with the JSON parser's message, which quotes the body:
      // a client's own bytes are never reflected. (Yoga took that description as the sign to
      // answer 400 even to application/json clients; the status now says so itself.)
      const http = extensions.http as { status?: number } | undefined;
      extensions.http = { status: http?.status ?? 400 };
    }
    return new GraphQLError(visible.message, {
      ...position,
      extensions: { ...extensions, code: extensions.code ?? ERROR_CODES.badUserInput },
    });
  }
  const serviceError = asServiceError(cause);
  if (serviceError !== undefined) {
    return new GraphQLError(serviceError.message, { ...position, extensions: serviceErrorExtensions(serviceError) });
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

/** How loudly an error Yoga reports belongs in the log. */
export function logLevelOf(error: unknown): 'debug' | 'info' | 'warn' | 'error' {
  const cause = rootCause(error);
  // The service logs the database's unavailability itself, once per request, with its id.
  if (cause instanceof UnavailableError) return 'debug';
  // The client's own mistakes: its input, its budget, its document.
  if (cause instanceof ServiceError || isGraphQLError(cause)) return 'info';
  return 'error';
}
