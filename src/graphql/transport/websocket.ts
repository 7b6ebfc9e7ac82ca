/**
 * GraphQL over WebSocket on `/graphql` with the graphql-ws protocol (`graphql-transport-ws`):
 * the `ws` server takes the HTTP upgrade, graphql-ws speaks the protocol, and every operation
 * runs through Yoga's envelop (`getEnveloped`) exactly as over HTTP: the same parser and
 * document limits, validation, context (client IP from the upgrade request, the service),
 * error masking and operation metrics.
 *
 * An API key comes in the `connection_init` payload's `apiKey` (or the upgrade's headers) and is
 * checked when the connection opens and again for each operation (src/http/api-key-guard.ts); an
 * invalid, unknown or revoked key, or an `apiKey` that is not a string, closes the connection
 * with 4401. A key in the upgrade URL is a 400.
 *
 * graphql-ws runs on the `ws` server through ./graphql-ws-server.ts, which logs what graphql-ws's
 * own adapter would print to the console.
 *
 * A connection's subscriptions are cut together when the client stops reading (the socket's
 * buffered bytes, see ../schema/subscriptions/event-queue.ts); graphql-ws pings every KEEP_ALIVE_MS, which
 * keeps proxies from closing an idle connection and finds dead peers. At shutdown the
 * subscriptions complete (the live-updates hub ends them) and the sockets close with 1001.
 *
 * Results go out without the `http` extension our errors carry for HTTP (a 503's `Retry-After`,
 * say): Yoga takes it off every answer it writes, and a graphql-ws client would otherwise see a
 * field the contract does not have (`extensions` are `code` and, where it applies, `retryAfter`).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  type ExecutionArgs,
  type ExecutionResult,
  type execute,
  type FormattedExecutionResult,
  GraphQLError,
  type GraphQLFormattedError,
  type subscribe,
} from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import { type WebSocket, WebSocketServer } from 'ws';
import { admitConnection } from '../../http/api-key-guard.js';
import { API_KEY_IN_URL_MESSAGE, apiKeyInQuery, INVALID_API_KEY_MESSAGE } from '../../limits/api-key-credentials.js';
import type { Logger } from '../../logging/logger.js';
import type { ApiKeyStore } from '../../service/api-keys.js';
import type { GraphQLServer } from '../yoga.js';
import { serveGraphQLWs } from './graphql-ws-server.js';
import { MAX_REQUEST_BODY_BYTES } from './request-body-limit.js';

const KEEP_ALIVE_MS = 15_000;

/**
 * graphql-ws's close code for an unauthenticated connection; its client does not retry it. An
 * invalid, unknown or revoked API key closes the connection with it and `Invalid API key`.
 */
const INVALID_API_KEY_CLOSE_CODE = 4401;

export interface GraphQLWebSocket {
  /** Takes an HTTP upgrade of `/graphql`. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every connection with 1001 and stops the server. */
  close(): Promise<void>;
}

/** What Yoga's envelop returns, kept on the execution arguments so execute and subscribe find it. */
interface Enveloped {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

export function createGraphQLWebSocket(
  { yoga, trusted }: GraphQLServer,
  logger: Logger,
  apiKeys: ApiKeyStore,
  trustProxyHops: number,
): GraphQLWebSocket {
  // A message is a GraphQL request: the same bound as an HTTP body.
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_REQUEST_BODY_BYTES });
  const disposable = serveGraphQLWs(
    {
      // The key of the connection (the `apiKey` of connection_init, or the upgrade's headers);
      // every operation of the connection then counts under it.
      onConnect: async (ctx) => {
        const admitted = await admitConnection(
          apiKeys,
          ctx.extra.request,
          ctx.connectionParams?.apiKey,
          trustProxyHops,
        );
        if (!admitted) ctx.extra.socket.close(INVALID_API_KEY_CLOSE_CODE, INVALID_API_KEY_MESSAGE);
        return admitted;
      },
      onSubscribe: async (ctx, _id, payload) => {
        // Again for each operation: a key revoked since the connection opened admits no more.
        if (!(await admitConnection(apiKeys, ctx.extra.request, ctx.connectionParams?.apiKey, trustProxyHops))) {
          ctx.extra.socket.close(INVALID_API_KEY_CLOSE_CODE, INVALID_API_KEY_MESSAGE);
          return [new GraphQLError(INVALID_API_KEY_MESSAGE, { extensions: { code: 'UNAUTHENTICATED' } })];
        }
        // A `documentId` (with an empty `query`: the protocol requires a string) names a trusted
        // document, and a documents-only key runs nothing else (./trusted-documents.ts).
        const params = await trusted.forSocket(payload, ctx.extra.request);
        if (isErrorList(params)) return params;
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
        });
        let document: ReturnType<typeof parse>;
        try {
          document = parse(params.query ?? '');
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        const errors = validate(schema, document);
        if (errors.length > 0) return errors;
        const rootValue: Enveloped = { execute, subscribe };
        return {
          schema,
          document,
          operationName: params.operationName,
          variableValues: params.variables,
          contextValue: await contextFactory(),
          rootValue,
        };
      },
      execute: (args) => (args.rootValue as Enveloped).execute(args) as ReturnType<typeof execute>,
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args) as ReturnType<typeof subscribe>,
      onNext: (_ctx, _id, _payload, _args, result) => withoutHttpExtensions(result),
      onError: (_ctx, _id, _payload, errors) => {
        logger.debug({ errors: errors.map((error) => error.message) }, 'graphql-ws operation refused');
        return errors.map(formattedWithoutHttp);
      },
    },
    server,
    logger,
    KEEP_ALIVE_MS,
  );

  return {
    handleUpgrade(req, socket, head) {
      if (req.url !== undefined && apiKeyInQuery(req.url)) {
        const body = JSON.stringify({ error: API_KEY_IN_URL_MESSAGE });
        socket.end(
          `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        return;
      }
      server.handleUpgrade(req, socket, head, (ws: WebSocket) => server.emit('connection', ws, req));
    },
    async close() {
      // Closes each connection with 1001 ("Going away") and stops the server.
      await disposable.dispose();
    },
  };
}

const isErrorList = (value: GraphQLParams | readonly GraphQLError[]): value is readonly GraphQLError[] =>
  Array.isArray(value);

/** A result as a client sees it over HTTP: no error or result keeps its `http` extension. */
function withoutHttpExtensions(result: ExecutionResult): FormattedExecutionResult | undefined {
  const httpInErrors = result.errors?.some((error) => error.extensions.http !== undefined) ?? false;
  if (!httpInErrors && result.extensions?.http === undefined) return undefined;
  const { http: _http, ...extensions } = result.extensions ?? {};
  return {
    ...(result.errors === undefined ? {} : { errors: result.errors.map(formattedWithoutHttp) }),
    ...('data' in result ? { data: result.data } : {}),
    ...(Object.keys(extensions).length > 0 ? { extensions } : {}),
  };
}

function formattedWithoutHttp(error: GraphQLError): GraphQLFormattedError {
  const formatted = error.toJSON();
  if (formatted.extensions?.http === undefined) return formatted;
  const { http: _http, ...extensions } = formatted.extensions;
  return { ...formatted, extensions };
}
