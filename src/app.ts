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
import { createAddressPolicy } from './avatars/address-policy.js';
import { AvatarImages } from './avatars/avatar-images.js';
import type { Config } from './config/config.js';
import type { ChangeFeed, ChangeFeedHandlers } from './db/change-feed.js';
import type { DatabaseHandle } from './db/database.js';
import { openConfiguredDatabase } from './db/open-configured.js';
import { registerGraphiQLAssetRoutes } from './graphql/graphiql/graphiql.js';
import { type GraphQLHttpPath, graphqlRoute } from './graphql/transport/over-http.js';
import { createGraphQLWebSocket } from './graphql/transport/websocket.js';
import { createGraphQLServer, GRAPHQL_ENDPOINT, type GraphQLServerDeps } from './graphql/yoga.js';
import { applyCors } from './http/cors.js';
import { requestIdOf } from './http/request-id.js';
import { type Match, Router } from './http/router.js';
import { createRateLimits } from './limits/create-rate-limits.js';
import type { Logger } from './logging/logger.js';
import { registerAvatarMetrics } from './ops/avatar-metrics.js';
import { registerLiveUpdateMetrics } from './ops/live-update-metrics.js';
import { createOperations, type Operations } from './ops/operations.js';
import { UNMATCHED_ROUTE } from './ops/request-log.js';
import { startTracing, type Tracing } from './ops/tracing.js';
import { answerUndecodableApiUrl } from './rest/fallbacks.js';
import { registerRestRoutes } from './rest/routes.js';
import { createAvatarService } from './service/avatars.js';
import { Links } from './service/links.js';
import { createLiveUpdates, type LiveUpdates } from './service/live-updates.js';
import { ProfileCache } from './service/profile-cache.js';
import { createProfilesService, type ProfilesService } from './service/profiles-service.js';
import { createVCardService } from './service/vcard.js';
import { createWebFingerService } from './service/webfinger.js';

export interface App {
  config: Config;
  database: DatabaseHandle;
  logger: Logger;
  profiles: ProfilesService;
  cache: ProfileCache;
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
  feed = appChangeFeed(database, cache, live, logger);
  if (config.profileCacheSize > 0) await feed.start();
  registerLiveUpdateMetrics(operations.metrics.registry, () => live.stats());
  const links = new Links(config.publicUrl);
  const avatars = createAvatarService(profiles, links, avatarImages(config, logger, operations, tracing));
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
  const websocket = createGraphQLWebSocket(graphql, logger);
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
    handle: requestHandler(router, operations, tracing),
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
      await limits.close();
      stopObservingStatements?.();
      if (options.database === undefined) await database.close();
      await tracing?.shutdown();
    },
  };
}

/**
 * What fetches and resizes avatar originals (undefined with AVATAR_PROXY=off). Resizes run one at
 * a time with one libvips thread (src/avatars/image-resize.ts), leaving the other core to the
 * event loop.
 */
function avatarImages(
  config: Config,
  logger: Logger,
  operations: Operations,
  tracing: Tracing | undefined,
): AvatarImages | undefined {
  if (!config.avatarProxy) return undefined;
  return new AvatarImages({
    policy: createAddressPolicy(config.avatarPrivateOrigins),
    timeoutMs: config.avatarFetchTimeoutMs,
    maxBytes: config.avatarMaxBytes,
    directory: config.avatarCacheDir,
    logger,
    observer: registerAvatarMetrics(operations.metrics.registry, tracing?.originFetch),
  });
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
 * existed, so it costs nothing.
 */
function requestHandler(
  router: Router,
  operations: Operations,
  tracing: Tracing | undefined,
): (req: IncomingMessage, res: ServerResponse) => void {
  const route = (req: IncomingMessage, res: ServerResponse): Match => {
    res.setHeader('X-Request-Id', requestIdOf(req));
    const match = router.match(req, res);
    if (match.route?.cors === true) applyCors(res);
    operations.observe(req, res, match.route?.pattern ?? UNMATCHED_ROUTE);
    return match;
  };
  if (tracing === undefined) return (req, res) => route(req, res).answer();
  return (req, res) => {
    const match = route(req, res);
    tracing.traceRequest(req, res, match.route?.pattern, match.answer);
  };
}

/**
 * The change feed that keeps the profile cache fresh and drives live updates. With the cache on
 * it starts with the app; with the cache off, on the first live-update subscription (so a
 * service that uses neither opens no LISTEN connection). While the feed is not live the cache
 * neither answers nor fills; every transition empties it, as changes may have been missed, and
 * makes live updates read every watched name again. The cache evicts first: the live updates'
 * read after a change must not be answered from the old entry.
 */
function appChangeFeed(
  database: DatabaseHandle,
  cache: ProfileCache,
  live: LiveUpdates,
  logger: Logger,
): AppChangeFeed {
  let feed: ChangeFeed | undefined;
  let starting: Promise<void> | undefined;
  let closed = false;
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
    onLive: () => {
      cache.clear();
      live.everythingMayHaveChanged();
      logger.info('profile cache answering: change notifications are heard');
    },
    onLost: (reason) => {
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
