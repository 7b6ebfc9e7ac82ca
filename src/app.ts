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
import { AvatarImages, type AvatarImagesOptions } from './avatars/avatar-images.js';
import type { Config } from './config/config.js';
import type { DatabaseHandle } from './db/database.js';
import { openConfiguredDatabase } from './db/open-configured.js';
import { EdgeCaching } from './edge/edge-caching.js';
import { edgeFeedHandlers, startPurging } from './edge/purge-leadership.js';
import { registerGraphiQLAssetRoutes } from './graphql/graphiql/graphiql.js';
import { type GraphQLHttpPath, graphqlRoute } from './graphql/transport/over-http.js';
import { createGraphQLWebSocket } from './graphql/transport/websocket.js';
import { createGraphQLServer, GRAPHQL_ENDPOINT, type GraphQLServer, type GraphQLServerDeps } from './graphql/yoga.js';
import { createRequestHandler } from './http/request-handler.js';
import { Router } from './http/router.js';
import { createRateLimits } from './limits/create-rate-limits.js';
import { liveLog } from './loaders/change-log.js';
import { readProfilesOnPrimary } from './loaders/loaders.js';
import { webhookReads } from './loaders/webhooks.js';
import type { Logger } from './logging/logger.js';
import { registerAvatarMetrics } from './ops/avatar-metrics.js';
import { ChangeLogRetention, registerChangeLogMetrics } from './ops/change-log-retention.js';
import { registerLiveUpdateMetrics } from './ops/live-update-metrics.js';
import { createOperations, type Operations } from './ops/operations.js';
import { registerPurgeMetrics } from './ops/purge-metrics.js';
import { UNMATCHED_ROUTE } from './ops/request-log.js';
import { startTracing, type Tracing } from './ops/tracing.js';
import { registerWebhookMetrics } from './ops/webhook-metrics.js';
import { createAddressPolicy } from './outbound/address-policy.js';
import type { Resolver } from './outbound/checked-target.js';
import { registerApiReferenceRoutes } from './rest/api-reference.js';
import { answerUndecodableApiUrl } from './rest/fallbacks.js';
import { registerRestRoutes } from './rest/routes.js';
import { apiKeyFeedHandlers } from './service/api-key-feed.js';
import { ApiKeyStore } from './service/api-keys.js';
import { createAvatarService } from './service/avatars.js';
import { ServiceChangeFeed } from './service/change-feed.js';
import { describeFailure } from './service/errors.js';
import { Links } from './service/links.js';
import { createLiveUpdates, type LiveUpdates } from './service/live-updates.js';
import { ProfileCache } from './service/profile-cache.js';
import { createProfilesService, type ProfilesService } from './service/profiles-service.js';
import { createVCardService } from './service/vcard.js';
import { createWebFingerService } from './service/webfinger.js';
import { webhookBudget } from './service/webhook-budget.js';
import { createWebhooks } from './service/webhooks.js';
import { refusedWebhookUrl, webhookPoster } from './webhooks/delivery.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { newSecret, SecretStore } from './webhooks/secrets.js';

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
  /** Webhook deliveries of this process (tests wake it and read how many are in flight). */
  webhooks: WebhookDispatcher;
  /** Health, readiness, metrics, request logs, and the shutdown switch. */
  operations: Operations;
  /** OpenTelemetry tracing; undefined when it is off (no OTLP endpoint configured). */
  tracing: Tracing | undefined;
  /** Yoga's handler and engine behind `/graphql` (bench/graphql-cost.ts measures the engine alone). */
  graphql: GraphQLServer;
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
  /**
   * GraphQL server settings other than the configuration's (tests: document caches, compiled
   * execution, and plugins that run after the service's own, before tracing).
   */
  graphql?: Pick<GraphQLServerDeps, 'documents' | 'compiledExecution' | 'keptAnswers' | 'plugins'>;
  /**
   * Avatar image settings other than the configuration's (tests: a clock the test moves, and the
   * origin process at the service's priority, so answers do not depend on spare CPU).
   */
  avatarImages?: Pick<AvatarImagesOptions, 'clock' | 'idlePriority'>;
  /**
   * How webhook URLs' host names are resolved, at creation and at each delivery (tests: names
   * that resolve to the addresses under test, without a DNS server).
   */
  webhookResolve?: Resolver;
}

export async function createApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  const database = options.database ?? (await openConfiguredDatabase(config, { log: logger, replicas: true }));
  const tracing = await startTracing(config.tracing, logger);
  const stopObservingStatements = tracing === undefined ? undefined : database.observeStatements?.(tracing.statements);
  const feed = new ServiceChangeFeed({ database, logger });
  const cache = new ProfileCache(config.profileCacheSize, () => feed.live);
  const operations = createOperations({ database, logger, cacheStats: () => cache.stats() });
  const limits = operations.observeRateLimits(createRateLimits(config, logger));
  const edge = new EdgeCaching(
    {
      purging: config.cachePurgeUrls.length > 0,
      maxAgeSeconds: config.cacheMaxAgeSeconds,
      sharedMaxAgeSeconds: config.cacheSharedMaxAgeSeconds,
    },
    () => feed.live,
  );
  const purging = startPurging(config.cachePurgeUrls, database, logger, (stats) =>
    registerPurgeMetrics(operations.metrics.registry, stats),
  );
  const profiles = createProfilesService({ database, limits, cache, logger, edge });
  const live = createLiveUpdates({
    log: liveLog(database),
    readProfiles: (names) => readProfilesOnPrimary(database, names),
    budget: limits.profile,
    logger,
    ready: () => feed.start(),
    perClient: config.liveSubscriptionsPerClient,
    total: config.liveSubscriptionsMax,
  });
  const apiKeys = new ApiKeyStore({
    database,
    config,
    logger,
    isLive: () => feed.live,
    startFeed: () =>
      void feed
        .start()
        .catch((error: unknown) => logger.warn({ reason: describeFailure(error) }, 'change feed not started')),
  });
  // Before the feed's handlers, which wake it: the feed may go live while the app is still being made.
  const webhookTarget = {
    policy: createAddressPolicy(config.webhooks.privateOrigins),
    ...(options.webhookResolve === undefined ? {} : { resolve: options.webhookResolve }),
  };
  const secrets = new SecretStore(config.webhooks.secretKey);
  const dispatcher: WebhookDispatcher = new WebhookDispatcher({
    db: database.db,
    config: config.webhooks,
    secrets,
    post: webhookPoster(webhookTarget, config.webhooks.timeoutMs),
    readProfiles: (names) => readProfilesOnPrimary(database, names),
    logger,
    observer: registerWebhookMetrics(operations.metrics.registry, () => dispatcher.waiting),
    whileActive: () =>
      void feed
        .start()
        .catch((error: unknown) => logger.warn({ reason: describeFailure(error) }, 'change feed not started')),
  });
  feed.deliverTo(cache, live, edgeFeedHandlers(edge, purging?.purger), apiKeyFeedHandlers(apiKeys, live, logger), {
    onChange: () => dispatcher.wake(),
    onLive: () => dispatcher.wake(),
    onLost: () => {},
  });
  if (config.profileCacheSize > 0 || edge.purging) await feed.start();
  registerLiveUpdateMetrics(operations.metrics.registry, () => live.stats());
  const retention = new ChangeLogRetention(database.db, config.changeLogRetentionDays, logger);
  retention.start();
  registerChangeLogMetrics(operations.metrics.registry, () => retention.figures());
  const webhooks = createWebhooks({
    reads: webhookReads(database),
    checkUrl: (url) => refusedWebhookUrl(url, webhookTarget),
    newSecret: (endpointId) => {
      const secret = newSecret();
      return { stored: secrets.seal(secret, endpointId), shown: secret.shown };
    },
    wake: () => dispatcher.wake(true),
  });
  dispatcher.start();
  const links = new Links(config.publicUrl);
  // Resizes run one at a time with one libvips thread (src/avatars/image-resize.ts), leaving the
  // other core to the event loop.
  const avatarImages = config.avatarProxy
    ? new AvatarImages({
        policy: createAddressPolicy(config.avatarPrivateOrigins),
        timeoutMs: config.avatarFetchTimeoutMs,
        maxBytes: config.avatarMaxBytes,
        resizesPerSecond: config.avatarResizesPerSecond,
        directory: config.avatarCacheDir,
        diskFiles: config.avatarVariantCacheFiles,
        ...options.avatarImages,
        logger,
        observer: registerAvatarMetrics(operations.metrics.registry, tracing?.originFetch),
      })
    : undefined;
  const avatars = createAvatarService(profiles, links, avatarImages);
  const vcards = createVCardService(profiles, links);
  const webfinger = createWebFingerService(profiles, avatars, links);

  const router = new Router({ onBadUrl: answerUndecodableApiUrl });
  operations.registerRoutes(router);
  registerRestRoutes(router, {
    profiles,
    avatars,
    vcards,
    webfinger,
    live,
    webhooks,
    webhookBudget: webhookBudget(limits.profile),
    config,
    logger,
    edge,
  });
  const graphql = createGraphQLServer({
    profiles,
    avatars,
    live,
    config,
    logger,
    edge,
    ...options.graphql,
    // Tracing's last: its span wraps the executor the plugins before it chose.
    plugins: [
      operations.graphqlPlugin,
      ...(options.graphql?.plugins ?? []),
      ...(tracing === undefined ? [] : [tracing.graphqlPlugin]),
    ],
  });
  router.on(
    ['GET', 'POST'],
    GRAPHQL_ENDPOINT,
    graphqlRoute(graphql, { path: options.graphqlHttpPath ?? 'service', logger }),
    { cors: true },
  );
  registerGraphiQLAssetRoutes(router, logger);
  registerApiReferenceRoutes(router, logger);
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
    graphql,
    handle: createRequestHandler({
      router,
      observation: operations,
      unmatchedRoute: UNMATCHED_ROUTE,
      tracing,
      apiKeys,
      logger,
      trustProxyHops: config.trustProxyHops,
      graphqlPattern: GRAPHQL_ENDPOINT,
    }),
    apiKeys,
    live,
    webhooks: dispatcher,
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
      await dispatcher.close();
      await retention.close();
      await avatarImages?.close();
      await purging?.close();
      await feed.close();
      await apiKeys.close().catch(() => {});
      await limits.close();
      stopObservingStatements?.();
      if (options.database === undefined) await database.close();
      await tracing?.shutdown();
    },
  };
}
