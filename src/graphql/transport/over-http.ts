/**
 * GraphQL over HTTP at `/graphql`: which requests the service's own HTTP layer answers, and which
 * go to Yoga's handler. Yoga is the GraphQL server either way — the same schema, the same envelop
 * plugins (limits, document caches, validation by shape, compiled execution, error masking,
 * operation metrics), the same result processors — but its Node adapter (`yoga.requestListener`,
 * @whatwg-node/server) turns every request into a Fetch `Request` and every answer back, with an
 * AbortController (and a DOMException when it is aborted at the end of each response), streams and
 * promise helpers, which cost more CPU per request than the GraphQL work of a small document (see
 * docs/decisions.md, "GraphQL over HTTP in the service's HTTP layer").
 *
 * Answered here (nearly all traffic), through `yoga.getResultForParams` (Yoga's `onParams` hooks —
 * persisted queries, parameter checks —, then parse, validate, context, execute with every envelop
 * plugin) and Yoga's own `onResultProcess` hooks and result processors:
 * - `POST` with `Content-Type: application/json` whose body is one JSON object of GraphQL
 *   parameters (`query`, `variables`, `operationName`, `extensions`), within the body limit;
 * - `GET` with those parameters in the query string;
 * - when the client's `Accept` makes Yoga answer a single result as `application/json` or
 *   `application/graphql-response+json` (no `Accept`, `*\/*`, either JSON type, lists of them).
 *
 * Handed to Yoga's handler unchanged (`yoga.requestListener`):
 * - the GraphiQL page (`GET` accepting `text/html`), other media types (`multipart/form-data`,
 *   `application/graphql+json`, form bodies), `Accept` that selects no JSON type (`text/event-stream`
 *   alone: subscriptions over SSE, 406s) or refuses a type (`q=0`), compressed bodies and other
 *   charsets than UTF-8 (Yoga's body plugin decodes or refuses them);
 * - batches (a JSON array), bodies that are not JSON objects, parameters Yoga refuses (unknown
 *   keys, wrong types, variables that are not JSON): Yoga writes its own 400s;
 * - documents that may stream (the execution plan's `mayStream`: the word `subscription` in the
 *   text, and hash-only persisted queries), when `Accept` admits a stream type, since their answer
 *   may be a stream — unless the text is of a query that ran here before
 *   (../execution/prepared-operations.ts), which does not;
 * - anything the engine refuses before executing (a persisted query not found, or whose hash
 *   does not match): Yoga runs the parameters again and writes the error.
 * A body already read is handed over as `req.body`, which Yoga's adapter takes instead of the
 * stream (as it does behind Express or Fastify).
 *
 * The answer must not depend on the path: test/graphql-over-http.test.ts sends the same generated
 * requests to both and compares them, and the GraphQL suites run on both. What here repeats Yoga,
 * and the Yoga version it was checked against, is in ./README.md.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, isPromise, processRegularResult } from 'graphql-yoga';
import { isEncoded, unsupportedCharset } from '../../http/body-coding.js';
import { codingOf, isCompressible, MIN_COMPRESSED_BYTES, sendEncoded } from '../../http/compression.js';
import { readBody, requestBodyTooLargeMessage } from '../../http/request-body.js';
import { sameHeaderName, sendError } from '../../http/respond.js';
import type { RouteHandler } from '../../http/router.js';
import type { Logger } from '../../logging/logger.js';
import type { RequestContext } from '../execution/prepared-operations.js';
import { type GraphQLServer, requestServerContext } from '../yoga.js';
import { type JsonMediaType, jsonMediaTypeFor, mayStream } from './accept.js';
import { MAX_REQUEST_BODY_BYTES } from './request-body-limit.js';
import type { ResultProcessHook } from './result-process-hooks.js';

/** Who answers `/graphql`: the service's HTTP layer where it can (production), or Yoga alone (tests). */
export type GraphQLHttpPath = 'service' | 'yoga';

interface GraphQLParams {
  query?: string;
  /** Trusted documents: the id of a manifest document (./trusted-documents.ts). */
  documentId?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  extensions?: Record<string, unknown>;
}

export interface GraphQLRouteOptions {
  path: GraphQLHttpPath;
  logger: Logger;
  bodyLimitBytes?: number;
}

/** Why a request went to Yoga's handler: the debug log line says it, for operators and tests. */
type HandOverReason = 'media type' | 'parameters' | 'may stream' | 'refused before execution';

export const HAND_OVER_MESSAGE = 'GraphQL request handed to Yoga';

export function graphqlRoute(server: GraphQLServer, options: GraphQLRouteOptions): RouteHandler {
  const { yoga } = server;
  if (options.path === 'yoga') return (req, res) => void yoga.requestListener(req, res);
  const { logger } = options;
  /** A body already read is handed over as `req.body` (see the header). */
  const handOver = (req: IncomingMessage, res: ServerResponse, reason: HandOverReason, body?: Buffer) => {
    if (logger.isLevelEnabled('debug')) logger.debug({ reason }, HAND_OVER_MESSAGE);
    if (body !== undefined) Object.assign(req, { body });
    void yoga.requestListener(req, res);
  };
  const answer = resultWriter(server);
  // Read once: each read through Yoga's adapter (a Proxy) makes a new bound function.
  const getResultForParams = yoga.getResultForParams;
  const { prepared, trusted, plan } = server;
  const bodyLimit = options.bodyLimitBytes ?? MAX_REQUEST_BODY_BYTES;
  const waitUntil = waitUntilOf(logger);

  const run = async (req: IncomingMessage, res: ServerResponse, mediaType: JsonMediaType, body?: Buffer) => {
    const params = body === undefined ? paramsOfUrl(req.url ?? '') : paramsOfBody(body);
    if (params === undefined) {
      handOver(req, res, 'parameters', body);
      return;
    }
    // By a known id: the parameters the trusted-documents hook would make, to find a prepared
    // document by. A documents-only key's query must meet that hook: it is never run prepared.
    const asRun = trusted.asRun(params);
    const preparable = asRun !== params || params.query == null || !trusted.documentsOnly(req);
    // A prepared document is a query that ran (./prepared-operations.ts): its answer is no stream.
    const document = preparable ? prepared.find(asRun) : undefined;
    if (document === undefined && mayStream(req.headers.accept) && plan.mayStream(asRun)) {
      handOver(req, res, 'may stream', body);
      return;
    }
    const request = new NodeRequestView(req);
    const serverContext: ServerContext = requestServerContext(req, res, waitUntil);
    let result: YogaResult | undefined;
    if (document !== undefined) {
      result = await prepared.run(document, asRun, request, serverContext);
    } else {
      try {
        result = await getResultForParams({ params, request: request.asRequest() }, serverContext);
      } catch {
        // Refused before execution (see the header): Yoga's handler writes the error.
        handOver(req, res, 'refused before execution', body);
        return;
      }
      prepared.learn(asRun, result);
    }
    if (result === undefined) throw new Error('the GraphQL engine gave no result');
    // Most answers are written at once; awaiting nothing would still cost the request a turn.
    const writing = answer(request, serverContext, result, mediaType);
    if (writing !== undefined) await writing;
  };

  return (req, res) => {
    const mediaType = jsonMediaTypeFor(req.method, req.headers.accept);
    if (mediaType === undefined || (req.method === 'POST' && !isPlainJsonBody(req))) {
      handOver(req, res, 'media type');
      return;
    }
    // A promise, not a callback of the body's events: those run outside the request's async
    // context, which tracing's spans (src/ops/tracing-sdk.ts) follow.
    const work =
      req.method === 'GET'
        ? run(req, res, mediaType)
        : readBody(req, bodyLimit).then((read) => {
            if (read.ok) return run(req, res, mediaType, read.body);
            // The rest of the body stays unread: the connection cannot carry another request.
            if (read.reason === 'too-large') {
              sendError(req, res, 413, requestBodyTooLargeMessage(bodyLimit), { Connection: 'close' });
            } else res.destroy();
          });
    work.catch((error: unknown) => {
      logger.error({ err: error }, 'GraphQL request failed in the HTTP layer');
      if (!res.headersSent) sendError(req, res, 500, 'Internal server error');
      else res.destroy();
    });
  };
}

/**
 * Yoga's own test for a JSON body (post-json.ts `isPOSTJsonRequest`), on the media type lower-cased
 * as ./request-mistakes.ts lower-cases it for Yoga, so both paths agree on it; and a body to read
 * as it is: compressed bodies and other charsets than UTF-8 go to Yoga, whose body plugin
 * (./request-body-limit.ts) decodes or refuses them.
 */
function isPlainJsonBody(req: IncomingMessage): boolean {
  const header = req.headers['content-type'];
  // What nearly every client sends: nothing to lower-case, no parameter, no coding.
  if (header === 'application/json' && req.headers['content-encoding'] === undefined) return true;
  const type = header?.split(',')[0]?.toLowerCase();
  if (type !== 'application/json' && type?.startsWith('application/json;') !== true) return false;
  return !isEncoded(req.headers['content-encoding']) && unsupportedCharset(header) === undefined;
}

/** The parameters of a GET, as Yoga reads them; undefined when Yoga would refuse them. */
function paramsOfUrl(url: string): GraphQLParams | undefined {
  const question = url.indexOf('?');
  const search = new URLSearchParams(question < 0 ? '' : url.slice(question + 1));
  try {
    return checkedParams({
      query: search.get('query') || undefined,
      documentId: search.get('documentId') || undefined,
      operationName: search.get('operationName') || undefined,
      variables: jsonParameter(search.get('variables')),
      extensions: jsonParameter(search.get('extensions')),
    });
  } catch {
    return undefined;
  }
}

function jsonParameter(text: string | null): unknown {
  return text ? JSON.parse(text) : undefined;
}

/** The parameters of a JSON body; undefined for anything but one object of valid parameters. */
function paramsOfBody(body: Buffer): GraphQLParams | undefined {
  try {
    return checkedParams(JSON.parse(body.toString('utf8')));
  } catch {
    return undefined;
  }
}

const PARAMETER_NAMES: ReadonlySet<string> = new Set([
  'query',
  'documentId',
  'variables',
  'operationName',
  'extensions',
]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `params` when Yoga's checks (use-check-graphql-query-params.ts) would pass them; undefined when
 * they would not, so that Yoga answers with its own error. A missing query is left to the
 * persisted-query plugin when the request names one, and to the trusted-documents hook when it
 * has a `documentId` (a `documentId` beside a query is that hook's error, so Yoga's).
 */
function checkedParams(params: unknown): GraphQLParams | undefined {
  if (!isObject(params)) return undefined;
  for (const key in params) if (params[key] != null && !PARAMETER_NAMES.has(key)) return undefined;
  const { query, documentId, variables, operationName, extensions } = params;
  if (query != null && typeof query !== 'string') return undefined;
  if (documentId != null && (typeof documentId !== 'string' || query != null)) return undefined;
  if (variables != null && !isObject(variables)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (extensions != null && !isObject(extensions)) return undefined;
  if (query == null && documentId == null && !isObject(extensions?.persistedQuery)) return undefined;
  return params as GraphQLParams;
}

/** Whether the answer to these parameters could be a stream (a subscription, or a document not seen). */
/**
 * What the engine's plugins see of the request: its method, URL and headers, read from the Node
 * request without building a Fetch `Request` (that is most of the adapter's cost). The plugins of
 * this service and Yoga's own read nothing else; a plugin that does fails the differential test.
 */
class NodeRequestView {
  readonly method: string;
  readonly headers: NodeHeadersView;
  #req: IncomingMessage;

  constructor(req: IncomingMessage) {
    this.#req = req;
    this.method = req.method ?? 'GET';
    this.headers = new NodeHeadersView(req.headers);
  }

  get url(): string {
    return `http://${this.#req.headers.host ?? 'localhost'}${this.#req.url ?? '/'}`;
  }

  /** Typed as what the hooks declare; they read only the members above. */
  asRequest(): Request {
    return this as unknown as Request;
  }
}

class NodeHeadersView {
  constructor(private readonly headers: IncomingMessage['headers']) {}

  get(name: string): string | null {
    const value = this.headers[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  has(name: string): boolean {
    return this.headers[name.toLowerCase()] !== undefined;
  }
}

/** Yoga's `waitUntil`: work a plugin leaves for after the answer, its failure logged. */
function waitUntilOf(logger: Logger): (work: unknown) => void {
  return (work) => {
    Promise.resolve(work).catch((error: unknown) =>
      logger.error({ err: error }, 'GraphQL work after the answer failed'),
    );
  };
}

/**
 * The server context Yoga's Node adapter gives the engine: the Node request and response (the
 * context factory and the operation metrics read them) and `waitUntil` for work after the answer.
 */
interface ServerContext extends RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  waitUntil(work: unknown): void;
}

/** What a result processor produces here instead of a Fetch `Response`: the bytes to write. */
class CapturedResponse {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;

  constructor(
    readonly body: string | null,
    init: { status?: number; headers?: Record<string, string> } = {},
  ) {
    this.status = init.status ?? 200;
    this.headers = { ...init.headers };
  }
}

type YogaResult = ExecutionResult | AsyncIterable<ExecutionResult>;
type ResultProcessor = Parameters<Parameters<ResultProcessHook>[0]['setResultProcessor']>[0];

/**
 * Writes a result as Yoga's `processResult` would: its plugins' `onResultProcess` hooks choose the
 * processor and media type (and may replace both, as the HTTP caching plugin does for a 304), and
 * the chosen processor builds the answer — with a `Response` class that captures it instead of
 * building a Fetch one, so that status, headers and body come from Yoga's own code.
 */
function resultWriter({ yoga, resultProcessHooks: { hooks, jsonChoice } }: GraphQLServer) {
  const { fetchAPI } = yoga;
  const capturing = { ...fetchAPI, Response: CapturedResponse as unknown as typeof fetchAPI.Response };

  return (
    request: NodeRequestView,
    serverContext: ServerContext,
    given: YogaResult,
    mediaType: JsonMediaType,
  ): Promise<void> | undefined => {
    let result = given;
    let processor: ResultProcessor | undefined;
    let accepted: string = mediaType;
    const acceptableMediaTypes: string[] = [];
    // One payload for all hooks, brought up to date before each (Yoga makes one per hook).
    const payload: Parameters<ResultProcessHook>[0] = {
      request: request.asRequest(),
      acceptableMediaTypes,
      result,
      setResult: (next) => {
        result = next as YogaResult;
      },
      resultProcessor: processor,
      setResultProcessor: (next, type) => {
        processor = next;
        accepted = type;
      },
      serverContext,
    };
    const finish = (): Promise<void> | undefined => {
      // A stream that no processor took is closed before the 406 (or a processor's own answer).
      if (isAsyncIterable(result)) return Promise.resolve(result[Symbol.asyncIterator]().return?.()).then(respond);
      return respond();
    };
    const respond = (): Promise<void> | undefined => {
      if (processor === undefined) {
        const headers = { accept: acceptableMediaTypes.join('; charset=utf-8, ') };
        return written(serverContext, new CapturedResponse(null, { status: 406, headers }), accepted);
      }
      const response: unknown = processor(result, capturing, accepted);
      return isPromise(response)
        ? Promise.resolve(response).then((built) => written(serverContext, built, accepted))
        : written(serverContext, response, accepted);
    };
    // Hooks run in order; most return nothing, and a request turns the event loop only for a promise.
    const runFrom = (index: number): Promise<void> | undefined => {
      for (let i = index; i < hooks.length; i += 1) {
        const hook = hooks[i] as ResultProcessHook;
        // One result: Yoga's choosing hook would pick the JSON processor and `mediaType` (see its doc).
        if (hook === jsonChoice && !Array.isArray(result) && !isAsyncIterable(result)) {
          processor = processRegularResult;
          accepted = mediaType;
          continue;
        }
        payload.result = result;
        payload.resultProcessor = processor;
        const returned = hook(payload);
        if (isPromise(returned)) return Promise.resolve(returned).then(() => runFrom(i + 1));
      }
      return finish();
    };
    return runFrom(0);
  };
}

/** Writes what a processor built; anything else than a captured answer is a fault of this layer. */
function written(serverContext: ServerContext, response: unknown, accepted: string): undefined {
  if (!(response instanceof CapturedResponse)) {
    throw new Error(
      `a result processor built a ${typeof response} instead of a captured answer (media type ${accepted})`,
    );
  }
  write(serverContext.req, serverContext.res, response);
  return undefined;
}

/** Answers at least this long (in UTF-16 units) are written as bytes; see write(). */
const ENCODE_ONCE_FROM_LENGTH = 16_384;

function write(req: IncomingMessage, res: ServerResponse, response: CapturedResponse): void {
  if (response.body === null) {
    res.writeHead(response.status, response.headers);
    res.end();
    return;
  }
  // Only answers that are compressed say `Vary: Accept-Encoding` here, as Yoga's own handler
  // answers the others (a cacheable answer's Vary and ETag name the coding already, ./http-caching.ts).
  if (
    response.status === 200 &&
    // Cheapest first: most clients of the API ask for no coding.
    codingOf(req) !== undefined &&
    isCompressible(headerOf(response.headers, 'content-type')) &&
    Buffer.byteLength(response.body) >= MIN_COMPRESSED_BYTES
  ) {
    sendEncoded(req, res, response.body, response.headers);
    return;
  }
  // A short string goes out in one write with the headers (node:http joins them); a long one is
  // encoded once, since measuring its length and then writing it would read it twice.
  const body = response.body.length < ENCODE_ONCE_FROM_LENGTH ? response.body : Buffer.from(response.body);
  // The headers are the captured answer's own copy (CapturedResponse): no other reader.
  response.headers['Content-Length'] = Buffer.byteLength(body);
  res.writeHead(response.status, response.headers);
  res.end(body);
}

/** A header of `headers` by its name in any case (Yoga's processors write `Content-Type`). */
function headerOf(headers: OutgoingHttpHeaders, name: string): string | undefined {
  for (const key in headers) {
    if (sameHeaderName(key, name)) {
      const value = headers[key];
      return typeof value === 'string' ? value : undefined;
    }
  }
  return undefined;
}
