/**
 * The `/graphql` endpoint: GraphQL over HTTP (GET and POST) with GraphiQL for browsers. Yoga
 * parses, validates and executes; the resolvers call the profiles service, like REST does.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { useGraphQlJit } from '@envelop/graphql-jit';
import type { DocumentNode } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { WebSocket } from 'ws';
import type { Config } from '../config/config.js';
import type { EdgeCaching } from '../edge/edge-caching.js';
import { serviceRequestFor } from '../http/service-request.js';
import type { Logger } from '../logging/logger.js';
import type { AvatarService } from '../service/avatars.js';
import type { LiveUpdates } from '../service/live-updates.js';
import type { ProfilesService } from '../service/profiles-service.js';
import { ServiceRequest } from '../service/request.js';
import { compiledExecutionByShape, type ShapePlan } from './execution/compiled-by-shape.js';
import { COMPILE_AFTER_EXECUTIONS, createDocumentCaches, type DocumentCaches } from './execution/document-cache.js';
import { maskError } from './execution/error-masking.js';
import { executeHooks } from './execution/execute-hooks.js';
import { type ExecutionPlan, executionPlan, onlyOnPath } from './execution/execution-plan.js';
import { GRAPHQL_BATCHING, graphqlLimitPlugins } from './execution/graphql-armor.js';
import { nestingLimitPlugin } from './execution/nesting-limit.js';
import { PreparedOperations } from './execution/prepared-operations.js';
import { profileAnswers } from './execution/profile-answers.js';
import { uncompiledWhenRefused } from './execution/refused-variables.js';
import { validationByShape } from './execution/validation-by-shape.js';
import { yogaLogger } from './execution/yoga-logger.js';
import { renderGraphiQL } from './graphiql/graphiql.js';
import { graphiqlOptions } from './graphiql/graphiql-options.js';
import type { GraphQLContext, StreamConnection } from './schema/context.js';
import { schema } from './schema/schema.js';
import { acceptQualityPlugin } from './transport/accept.js';
import { httpCachingPlugin } from './transport/http-caching.js';
import { persistedQueriesPlugin } from './transport/persisted-queries.js';
import { refusedStreamsPlugin } from './transport/refused-streams.js';
import { requestMistakesPlugin } from './transport/request-mistakes.js';
import { type ResultProcessHookList, resultProcessHooks } from './transport/result-process-hooks.js';
import { streamingHeadersPlugin } from './transport/streaming-headers.js';
import { type TrustedDocuments, trustedDocuments } from './transport/trusted-documents.js';

export const GRAPHQL_ENDPOINT = '/graphql';

/** What the Node adapter hands Yoga with each request; absent when a test calls `yoga.fetch`. */
interface NodeServerContext {
  req?: IncomingMessage;
  res?: ServerResponse;
  /** A graphql-ws connection (./transport/websocket.ts): `req` is its upgrade request, there is no `res`. */
  socket?: WebSocket;
}

export interface GraphQLServer {
  /**
   * Yoga as a server: its handler (`requestListener`, `fetch`) answers any GraphQL-over-HTTP
   * request; `getResultForParams`, `getEnveloped` and `fetchAPI` are what ./transport runs itself.
   */
  readonly yoga: YogaServerInstance<NodeServerContext, GraphQLContext>;
  /** Yoga's `onResultProcess` hooks in Yoga's order: see ./transport/result-process-hooks.ts. */
  readonly resultProcessHooks: ResultProcessHookList;
  /** Queries that ran whole once, run again from their context and execution on (./execution/prepared-operations.ts). */
  readonly prepared: PreparedOperations;
  /** Which path answers each operation (./execution/execution-plan.ts). */
  readonly plan: ExecutionPlan;
  /** Documents sent by `documentId` (./transport/trusted-documents.ts). */
  readonly trusted: TrustedDocuments;
}

/**
 * The server context ./transport/over-http.ts gives a request, with a slot for every field its
 * context gets later (Yoga's `request` and `params`, then this file's `context` fields), so that
 * filling them in stores into fields the object has instead of giving it a new shape per field,
 * a transition V8 would look up anew on every request.
 */
export function requestServerContext(
  req: IncomingMessage,
  res: ServerResponse,
  waitUntil: (work: unknown) => void,
): RequestServerContext {
  return {
    req,
    res,
    waitUntil,
    request: undefined,
    params: undefined,
    profiles: undefined,
    avatars: undefined,
    live: undefined,
    serviceRequest: undefined,
    connection: undefined,
  };
}

type RequestServerContext = {
  req: IncomingMessage;
  res: ServerResponse;
  waitUntil(work: unknown): void;
  /** What Yoga adds before the context is built (`handleParams`). */
  request: undefined;
  params: undefined;
} & { [Field in keyof GraphQLContext]: undefined };

export interface GraphQLServerDeps {
  profiles: ProfilesService;
  avatars: AvatarService;
  live: LiveUpdates;
  config: Config;
  logger: Logger;
  /** Extra Yoga plugins (operations), after the limits (always on). */
  plugins?: Plugin[];
  /** The document caches and their memory bound; made here unless given (tests look into them). */
  documents?: DocumentCaches<ShapePlan>;
  /** Compiled execution (graphql-jit), on unless false: tests compare answers without it. */
  compiledExecution?: boolean;
  /** Ready answers of cached profiles (./execution/profile-answers.ts), on unless false: tests compare answers without them. */
  keptAnswers?: boolean;
  /** Caching headers and tags of cacheable GET answers: the process's one EdgeCaching, made by the app. */
  edge: EdgeCaching;
}

/**
 * Compiled execution document by document (graphql-jit), for the operations of the plan's
 * `compiled` path (./execution/execution-plan.ts): their resolvers are called without a walk of
 * the document each time. Compiling costs more than a few executions save (see docs/decisions.md,
 * "Compiled execution after repeated executions"), so a document is compiled on its
 * COMPILE_AFTER_EXECUTIONS-th execution, and only while the document cache holds it and has room
 * for the compiled query (see ./execution/document-cache.ts): compiled queries live and die with
 * their cache entries. Variables a compiled document refuses are answered by uncompiled execution
 * (./execution/refused-variables.ts).
 */
function compiledExecution(documents: DocumentCaches, plan: ExecutionPlan, logger: Logger): Plugin {
  const executions = new WeakMap<DocumentNode, number>();
  const jit = useGraphQlJit(
    {},
    {
      // Without it the plugin prints the failed compilation with console.error, outside the log.
      onError: (result) =>
        logger.error(
          { errors: result.errors?.map((error) => error.message) },
          'GraphQL document could not be compiled',
        ),
      enableIf: ({ document, operationName }) => {
        // Subscriptions (graphql-jit's onSubscribe asks too) and other paths are not compiled here.
        if (plan.pathOf(document, operationName).kind !== 'compiled') return false;
        const count = (executions.get(document) ?? 0) + 1;
        if (count >= COMPILE_AFTER_EXECUTIONS) return documents.reserveCompiled(document);
        executions.set(document, count);
        return false;
      },
    },
  );
  return onlyOnPath(plan, 'compiled', {
    onSubscribe: jit.onSubscribe,
    onExecute(payload) {
      const uncompiled = payload.executeFn;
      return jit.onExecute?.({
        ...payload,
        setExecuteFn: (compiled) => payload.setExecuteFn(uncompiledWhenRefused(compiled, uncompiled)),
      });
    },
  });
}

/**
 * How a subscription's client connection is watched and cut (see ./schema/subscriptions/event-queue.ts).
 * Classes, not objects of closures: every request's context gets one, few requests subscribe.
 */
function streamConnectionOf(
  res: ServerResponse | undefined,
  socket: WebSocket | undefined,
): StreamConnection | undefined {
  if (socket !== undefined) return new WebSocketConnection(socket);
  return res === undefined ? undefined : new EventStreamConnection(res);
}

class WebSocketConnection implements StreamConnection {
  readonly transport = 'websocket';
  readonly #socket: WebSocket;

  constructor(socket: WebSocket) {
    this.#socket = socket;
  }

  backlog(): number {
    return this.#socket.bufferedAmount;
  }

  drop(): void {
    this.#socket.terminate();
  }
}

class EventStreamConnection implements StreamConnection {
  readonly transport = 'sse';
  readonly #res: ServerResponse;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  backlog(): number {
    return this.#res.writableLength + (this.#res.socket?.writableLength ?? 0);
  }

  drop(): void {
    this.#res.destroy();
  }
}

/** The key of requests without a Node request (tests calling `yoga.fetch`). */
const UNKNOWN_CLIENT = 'unknown';

export function createGraphQLServer({
  profiles,
  avatars,
  live,
  config,
  logger,
  plugins = [],
  documents = createDocumentCaches<ShapePlan>(),
  compiledExecution: compiled = true,
  keptAnswers = true,
  edge,
}: GraphQLServerDeps): GraphQLServer {
  const byShape = compiledExecutionByShape(schema, documents);
  const answers = keptAnswers ? profileAnswers(schema) : undefined;
  // Which path answers each operation; each path's plugin acts on its own operations only.
  const plan = executionPlan({ schema, answers, byShape: compiled ? byShape : undefined, extraPlugins: plugins });
  const resultProcess = resultProcessHooks();
  const execution = executeHooks();
  const masking = (error: unknown) => maskError(error, { production: config.production });
  const trusted = trustedDocuments(config.persistedDocuments);
  const yoga = createYoga<NodeServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    landingPage: false,
    // Per request: a visit opens on the example, a URL with a query on that query.
    graphiql: graphiqlOptions,
    // Served from this process (no CDN); see ./graphiql/graphiql.ts.
    renderGraphiQL,
    batching: GRAPHQL_BATCHING,
    // The service's one CORS policy (src/http/cors.ts) applies to /graphql like to /api.
    cors: false,
    // The request body limit of graphql-armor.ts reads Content-Length; Yoga's own limit would
    // pipe every body through a stream transform (see docs/decisions.md, "Yoga's request body limit off").
    maxRequestBodySize: false,
    parserAndValidationCache: documents.options,
    logging: yogaLogger(logger),
    maskedErrors: {
      maskError: masking,
      isDev: !config.production,
    },
    plugins: [
      // Before the persisted-query plugin: it checks the extension's shape first.
      requestMistakesPlugin(),
      acceptQualityPlugin(),
      // Before the persisted-query plugin: a documents-only key must not register documents.
      trusted.plugin,
      persistedQueriesPlugin(),
      streamingHeadersPlugin(),
      refusedStreamsPlugin(),
      httpCachingPlugin(edge),
      ...graphqlLimitPlugins({ hideFieldSuggestions: config.production }),
      // After the limits: its nesting check wraps their parser, so it runs before any parsing.
      nestingLimitPlugin(),
      documents.plugin,
      validationByShape(schema),
      ...(compiled
        ? [onlyOnPath(plan, 'compiled-by-shape', byShape.plugin), compiledExecution(documents, plan, logger)]
        : []),
      // After the plugins that choose the execute function: it wraps the one they chose.
      ...(answers === undefined ? [] : [onlyOnPath(plan, 'written-answer', answers.plugin)]),
      ...plugins,
      resultProcess.plugin,
      execution.plugin,
    ],
    context: ({ req, res, socket }): GraphQLContext => ({
      profiles,
      avatars,
      live,
      serviceRequest:
        req === undefined
          ? new ServiceRequest(UNKNOWN_CLIENT, randomUUID())
          : serviceRequestFor(req, res, config.trustProxyHops),
      connection: streamConnectionOf(res, socket),
    }),
  });
  const prepared = new PreparedOperations({
    plan,
    documents: documents.options.documentCache,
    getEnveloped: (context) => yoga.getEnveloped(context as Parameters<typeof yoga.getEnveloped>[0]),
    execute: execution.stage(),
    // As Yoga's `handleError` answers an error thrown in `handleParams`: masked, and logged when masking changed it.
    answerError: (error) => {
      const masked = masking(error);
      if (masked !== error) yoga.logger.error(error);
      return { errors: [masked] };
    },
  });
  return { yoga, resultProcessHooks: resultProcess.list(), prepared, plan, trusted };
}
