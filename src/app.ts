/**
 * Composition root: opens the database, builds every part of the service from the
 * configuration and wires their routes into one request handler. Tests build an App the same
 * way `main` does.
 *
 * A request goes: router (src/http) → REST handler (src/rest) or Yoga and the resolvers
 * (src/graphql) → the profiles service (src/service) → the request's loaders (src/loaders) →
 * the queries (src/db).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Config } from './config/config.js';
import type { ChangeFeed, ChangeFeedHandlers } from './db/change-feed.js';
import type { DatabaseHandle } from './db/database.js';
import { openConfiguredDatabase } from './db/open-configured.js';
import { registerGraphiQLAssetRoutes } from './graphql/graphiql/graphiql.js';
import { type GraphQLHttpPath, graphqlRoute } from './graphql/transport/over-http.js';
import { createGraphQLWebSocket } from './graphql/transport/websocket.js';
import { createGraphQLServer, GRAPHQL_ENDPOINT, type GraphQLServerDeps } from './graphql/yoga.js';
import { guardApiKey } from './http/api-key-guard.js';
import { applyCors } from './http/cors.js';
import { requestIdOf } from './http/request-id.js';
import { type Match, Router } from './http/router.js';
import { createRateLimits } from './limits/create-rate-limits.js';
import type { Logger } from './logging/logger.js';
import { registerLiveUpdateMetrics } from './ops/live-update-metrics.js';
import { createOperations, type Operations } from './ops/operations.js';
import { UNMATCHED_ROUTE } from './ops/request-log.js';
import { startTracing, type Tracing } from './ops/tracing.js';
import { answerUndecodableApiUrl } from './rest/fallbacks.js';
import { registerRestRoutes } from './rest/routes.js';
import { ApiKeyStore } from './service/api-keys.js';
import { createAvatarService } from './service/avatars.js';
import { describeFailure } from './service/errors.js';
import { Links } from './service/links.js';
import { createLiveUpdates, type LiveUpdates } from './service/live-updates.js';
import { ProfileCache } from './service/profile-cache.js';
import { createProfilesService, type ProfilesService } from './service/profiles-service.js';
import { apiKeyClient, apiKeyIdOf } from './service/request.js';
import { createVCardService } from './service/vcard.js';
import { createWebFingerService } from './service/webfinger.js';

export interface App {
  config: Config;
  database: DatabaseHandle;
  logger: Logger;
  profiles: ProfilesService;
  cache: ProfileCache;
  /** Which API keys are valid (cached, kept fresh by the change feed). */
  apiKeys: ApiKeyStore;
  /** Live-update subscriptions (GraphQL profileChanged, REST events); `close()` ends them at shutdown. */
  live: LiveUpdates;
  /** Health, readiness, metrics, request logs, and the shutdown switch. */
  operations: Operations;
  /** OpenTelemetry tracing; undefined when it is off (no OTLP endpoint configured). */
  tracing: Tracing | undefined;
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** An HTTP upgrade: WebSocket (graphql-ws) on /graphql, refused elsewhere. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Shutdown begins: live-update streams end cleanly, WebSocket connections close (1001). */
  endStreams(): Promise<void>;
  close(): Promise<void>;
}

export interface AppOptions {
  /** An already open, migrated database (tests); otherwise one is opened from the config. */
  database?: DatabaseHandle;
  /**
   * Who answers `/graphql` over HTTP: the service's HTTP layer with Yoga as the engine (the
   * default), or Yoga's own handler for every request. Tests run the GraphQL suites on both to
   * prove the answers do not depend on the path (src/graphql/transport/over-http.ts).
   */
  graphqlHttpPath?: GraphQLHttpPath;
  /** GraphQL server settings other than the configuration's (tests: document caches, compiled execution). */
  graphql?: Pick<GraphQLServerDeps, 'documents' | 'compiledExecution'>;
}

export async function createApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  const database = options.database ?? (await openConfiguredDatabase(config, { log: logger, replicas: true }));
  const tracing = await startTracing(config.tracing, logger);
  const stopObservingStatements = tracing === undefined ? undefined : database.observeStatements?.(tracing.statements);
  let feed: AppChangeFeed | undefined;
  const cache = new ProfileCache(config.profileCacheSize, () => feed?.live === true);
  const operations = createOperations({ database, logger, cacheStats: () => cache.stats() });
  const limits = operations.observeRateLimits(createRateLimits(config, logger));
  const profiles = createProfilesService({ database, limits, cache, logger });
  const live = createLiveUpdates({
    readProfiles: (names) => profiles.currentProfiles(names),
    budget: limits.profile,
    logger,
    ready: () => feed?.start() ?? Promise.resolve(),
    perClient: config.liveSubscriptionsPerClient,
    total: config.liveSubscriptionsMax,
  });
  const apiKeys = new ApiKeyStore({
    database,
    config,
    logger,
    isLive: () => feed?.live === true,
    startFeed: () =>
      void feed
        ?.start()
        .catch((error: unknown) => logger.warn({ reason: describeFailure(error) }, 'change feed not started')),
  });
  feed = appChangeFeed(database, cache, live, apiKeys, logger);
  if (config.profileCacheSize > 0) await feed.start();
  registerLiveUpdateMetrics(operations.metrics.registry, () => live.stats());
  const links = new Links(config.publicUrl);
  const avatars = createAvatarService(profiles, links);
  const vcards = createVCardService(profiles, links);
  const webfinger = createWebFingerService(profiles, links);

  const router = new Router({ onBadUrl: answerUndecodableApiUrl });
  operations.registerRoutes(router);
  registerRestRoutes(router, { profiles, avatars, vcards, webfinger, live, config, logger });
  const graphql = createGraphQLServer({
    profiles,
    avatars,
    live,
    config,
    logger,
    // Tracing's last: its span wraps the executor the plugins before it chose.
    plugins: tracing === undefined ? [operations.graphqlPlugin] : [operations.graphqlPlugin, tracing.graphqlPlugin],
    ...options.graphql,
  });
  router.on(
    ['GET', 'POST'],
    GRAPHQL_ENDPOINT,
    graphqlRoute(graphql, { path: options.graphqlHttpPath ?? 'service', logger }),
    { cors: true },
  );
  registerGraphiQLAssetRoutes(router, logger);
  const websocket = createGraphQLWebSocket(graphql, logger, apiKeys, config.trustProxyHops);
  const endStreams = async () => {
    live.close();
    await websocket.close();
  };

  return {
    config,
    database,
    logger,
    profiles,
    cache,
    operations,
    tracing,
    handle: requestHandler(router, operations, tracing, apiKeys, logger, config.trustProxyHops),
    apiKeys,
    live,
    upgrade(req, socket, head) {
      if (new URL(req.url ?? '/', 'http://localhost').pathname === GRAPHQL_ENDPOINT) {
        websocket.handleUpgrade(req, socket, head);
      } else {
        socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      }
    },
    endStreams,
    async close() {
      await endStreams().catch(() => {});
      await feed?.close();
      await apiKeys.close().catch(() => {});
      await limits.close();
      stopObservingStatements?.();
      if (options.database === undefined) await database.close();
      await tracing?.shutdown();
    },
  };
}

/** The change feed of one App, started at once or on first use; `live` is false until then. */
interface AppChangeFeed {
  readonly live: boolean;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Every request: its request ID, route, CORS headers and log line, then its answer — within its
 * SERVER span when tracing is on. With tracing off the handler is the same as before tracing
 * existed, so it costs nothing. The routes apps call (the CORS routes: `/api/…`, `/graphql`,
 * WebFinger) are answered after their API key is checked (src/http/api-key-guard.ts).
 */
function requestHandler(
  router: Router,
  operations: Operations,
  tracing: Tracing | undefined,
  apiKeys: ApiKeyStore,
  logger: Logger,
  trustProxyHops: number,
): (req: IncomingMessage, res: ServerResponse) => void {
  const onKey = (req: IncomingMessage, id: string) => operations.noteApiKey(req, id);
  const route = (req: IncomingMessage, res: ServerResponse): Match => {
    res.setHeader('X-Request-Id', requestIdOf(req));
    const match = router.match(req, res);
    operations.observe(req, res, match.route?.pattern ?? UNMATCHED_ROUTE);
    if (match.route?.cors !== true) return match;
    applyCors(res);
    const options = { graphql: match.route.pattern === GRAPHQL_ENDPOINT, logger, onKey, trustProxyHops };
    return { route: match.route, answer: () => guardApiKey(apiKeys, req, res, options, match.answer) };
  };
  if (tracing === undefined) return (req, res) => route(req, res).answer();
  return (req, res) => {
    const match = route(req, res);
    tracing.traceRequest(req, res, match.route?.pattern, match.answer);
  };
}

/**
 * The change feed that keeps the profile cache and the API keys fresh and drives live updates.
 * With the cache on it starts with the app; with the cache off, on the first live-update
 * subscription or API key (so a service that uses none of them opens no LISTEN connection).
 * While the feed is not live the cache neither answers nor fills; every transition empties it
 * (and the API keys), as changes may have been missed, and makes live updates read every watched
 * name again. The cache evicts first: the live updates'
 * read after a change must not be answered from the old entry.
 */
function appChangeFeed(
  database: DatabaseHandle,
  cache: ProfileCache,
  live: LiveUpdates,
  apiKeys: ApiKeyStore,
  logger: Logger,
): AppChangeFeed {
  let feed: ChangeFeed | undefined;
  let starting: Promise<void> | undefined;
  let closed = false;
  // A revoked key's open live-update streams end too; new requests are refused by the guard.
  const endStreamsIfRevoked = (keyId: string) => {
    apiKeys.isActive(keyId).then(
      (active) => {
        if (!active) live.endClient(apiKeyClient(keyId));
      },
      (error: unknown) =>
        logger.warn({ apiKey: keyId, reason: describeFailure(error) }, 'API key change: could not read the key'),
    );
  };
  const handlers: ChangeFeedHandlers = {
    onChange: (change) => {
      if (change.kind === 'everything') {
        cache.clear();
        live.everythingMayHaveChanged();
      } else {
        cache.evict(change.names);
        live.changed(change.names);
      }
    },
    onApiKeyChange: ({ keyId }) => {
      apiKeys.changed();
      endStreamsIfRevoked(keyId);
    },
    onLive: () => {
      apiKeys.changed();
      // A revocation may have gone unheard: check the keys of every open stream.
      for (const client of live.openClients()) {
        const keyId = apiKeyIdOf(client);
        if (keyId !== undefined) endStreamsIfRevoked(keyId);
      }
      cache.clear();
      live.everythingMayHaveChanged();
      logger.info('profile cache answering: change notifications are heard');
    },
    onLost: (reason) => {
      apiKeys.changed();
      cache.clear();
      logger.warn({ reason }, 'profile cache bypassed until change notifications are heard again');
    },
  };
  return {
    get live() {
      return feed?.live === true;
    },
    start() {
      starting ??= database.listenForChanges(handlers).then(async (opened) => {
        feed = opened;
        if (closed) await opened.close();
      });
      return starting;
    },
    async close() {
      closed = true;
      await starting?.catch(() => {});
      await feed?.close();
    },
  };
}
