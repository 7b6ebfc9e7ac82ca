/**
 * Client mistakes in GraphQL-over-HTTP requests answered as what they are: a 400 with a message
 * that says what to fix, logged at info, instead of Yoga's defaults.
 *
 * - Parameters in a query string or a form body that are not JSON (`variables={`,
 *   `extensions=[`): Yoga's parsers let the SyntaxError through, which became a masked
 *   INTERNAL_SERVER_ERROR (200) and two error lines in the log. Here they are read as Yoga reads
 *   them (the first value of each, empty meaning absent) and a bad one is named.
 * - A `persistedQuery` extension that is not `{ version: 1, sha256Hash: <string> }`: the
 *   persisted-query plugin ignored it, and the request failed later for its missing query with a
 *   spec-only status (200 for `application/json` clients).
 * - An `operationName` in a JSON body that is not a string (a number, a list, an object): Yoga
 *   checks the other parameters' types but not this one, so `{"toString": false}` reached code
 *   that reads it as text and failed as an INTERNAL_SERVER_ERROR (200), and `5` was answered as
 *   an operation not found. Both are now a 400 that names the parameter.
 * - Media types are case-insensitive (RFC 9110 8.3.1): `Application/JSON` was a 415. The type is
 *   lower-cased before Yoga picks its parser; its parameters (a multipart boundary) are kept.
 *
 * This plugin sits in Yoga, so both GraphQL HTTP paths answer alike (./over-http.ts hands such
 * requests to Yoga).
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

type GraphQLParams = {
  query?: string;
  /** Trusted documents (./trusted-documents.ts). */
  documentId?: string;
  operationName?: string;
  variables?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
};

const badRequest = (message: string) =>
  createGraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });

/** A JSON parameter of a query string or form body; a value that is not JSON is named. */
function jsonParameter(search: URLSearchParams, name: 'variables' | 'extensions'): unknown {
  const text = search.get(name);
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(`The ${name} parameter is not valid JSON`);
  }
}

/**
 * Yoga's reading of GraphQL parameters from a query string or form (request-parser/utils.ts), with
 * named errors, and the `documentId` of trusted documents, which Yoga's reading leaves out.
 */
function paramsOf(search: URLSearchParams): GraphQLParams {
  return {
    operationName: search.get('operationName') || undefined,
    query: search.get('query') || undefined,
    documentId: search.get('documentId') || undefined,
    variables: jsonParameter(search, 'variables') as GraphQLParams['variables'],
    extensions: jsonParameter(search, 'extensions') as GraphQLParams['extensions'],
  };
}

const isFormBody = (type: string | null) =>
  type?.split(',')[0]?.split(';')[0]?.trim() === 'application/x-www-form-urlencoded';

const PERSISTED_QUERY_SHAPE = 'expected {"version":1,"sha256Hash":"<SHA-256 of the document, hex>"}';

function isPersistedQuery(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { version, sha256Hash } = value as Record<string, unknown>;
  return version === 1 && typeof sha256Hash === 'string';
}

/** A JSON value's type as a client would call it (Yoga's own messages say `array`, not `object`). */
const typeOfJson = (value: unknown): string => (Array.isArray(value) ? 'array' : typeof value);

export function requestMistakesPlugin(): Plugin {
  return {
    onRequest({ request }) {
      const type = request.headers.get('content-type');
      if (type === null) return;
      const end = type.indexOf(';');
      const mediaType = end < 0 ? type : type.slice(0, end);
      if (mediaType !== mediaType.toLowerCase()) {
        request.headers.set('content-type', mediaType.toLowerCase() + (end < 0 ? '' : type.slice(end)));
      }
    },
    onRequestParse({ request, setRequestParser }) {
      // As Yoga's GET parser reads it: everything after the first `?`.
      if (request.method === 'GET') {
        setRequestParser(() => paramsOf(new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1))));
      }
      if (request.method === 'POST' && isFormBody(request.headers.get('content-type'))) {
        setRequestParser(async (form) => paramsOf(new URLSearchParams(await form.text())));
      }
    },
    onParams({ params }) {
      const { operationName } = params as { operationName?: unknown };
      if (operationName != null && typeof operationName !== 'string') {
        throw badRequest(`Expected "operationName" param to be a string, but given ${typeOfJson(operationName)}.`);
      }
      const persisted = params.extensions?.persistedQuery;
      if (persisted !== undefined && persisted !== null && !isPersistedQuery(persisted)) {
        throw badRequest(`Invalid persistedQuery extension: ${PERSISTED_QUERY_SHAPE}`);
      }
    },
  };
}
