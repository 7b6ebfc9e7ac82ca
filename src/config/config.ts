/**
 * The service's configuration: every environment variable of the API contract, read and
 * validated once at start. A bad value throws a ConfigError whose message is one line naming
 * the variable, so `npm start` can print it and stop.
 */
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from './config-error.js';
import { parseDuration, parseDurationList } from './durations.js';
import { type Network, parseNetwork } from './networks.js';
import {
  loadPersistedDocuments,
  PERSISTED_DOCUMENTS_VARIABLE,
  type PersistedDocuments,
  persistedDocumentFiles,
} from './persisted-documents.js';
import { type TracingConfig, tracingConfig } from './tracing.js';

/**
 * The database settings' defaults: those of the environment variables, and those the database
 * layer takes for a setting it is not given (the data commands, tests, benchmarks).
 */
export const DATABASE_DEFAULTS = {
  /** DB_POOL_SIZE */
  poolSize: 10,
  /** DB_CONNECT_TIMEOUT */
  connectTimeoutSeconds: 5,
  /** DB_STATEMENT_TIMEOUT_MS */
  statementTimeoutMs: 5000,
  /**
   * DB_READ_TIMEOUT_MS: how long a read of the request path waits. It covers what a
   * read needs on a healthy network with room to spare (the longest reconnect delay, a connection
   * start, a lookup's statement: tens of milliseconds), and it is short enough that a stalled
   * database turns into 503s, not into requests that hang as long as the stall. A link slower than
   * that (a round trip of several hundred milliseconds) needs a larger value.
   */
  readTimeoutMs: 2000,
  /** REPLICA_MAX_LAG_MS */
  replicaMaxLagMs: 5000,
  /** DATABASE_POOL_MODE */
  poolMode: 'session',
} as const;

export interface Config {
  port: number;
  host: string;
  /**
   * The service's external base URL (PUBLIC_URL), without a trailing slash: the start of every
   * link the service writes. Never taken from a request's Host or X-Forwarded-* headers.
   */
  publicUrl: string;
  /** PostgreSQL URL; undefined selects the embedded PGlite database in `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  /**
   * PostgreSQL streaming read replicas (DATABASE_REPLICA_URLS): lookups, batch, search, reverse
   * lookup and name checks read from them; empty: every read on `databaseUrl`.
   */
  databaseReplicaUrls: readonly string[];
  /**
   * A direct session to the primary for LISTEN and migrations (DATABASE_LISTEN_URL), when
   * `databaseUrl` goes through a pooler; undefined: `databaseUrl`.
   */
  databaseListenUrl: string | undefined;
  /**
   * `transaction` when `databaseUrl` and the replica URLs go through a transaction-mode pooler
   * (PgBouncer): no named prepared statements, no start-up parameters, no session state.
   */
  databasePoolMode: DatabasePoolMode;
  /** A replica further behind the primary than this is not read from (REPLICA_MAX_LAG_MS). */
  replicaMaxLagMs: number;
  dbPoolSize: number;
  dbConnectTimeoutSeconds: number;
  dbStatementTimeoutMs: number;
  /**
   * How long a read of the request path waits for PostgreSQL before it answers 503
   * (DB_READ_TIMEOUT_MS, docs/database-outages.md): a stalled database must not stall clients.
   */
  dbReadTimeoutMs: number;
  redisUrl: string | undefined;
  /**
   * Prefix of the rate-limit keys in Redis (RATE_LIMIT_PREFIX); undefined uses the default
   * (`nps:rl`). Deployments that share one Redis keep their budgets apart with it.
   */
  rateLimitPrefix: string | undefined;
  trustProxyHops: number;
  /** Owner checks per client IP per `rateWindowSeconds`. */
  ownerCheckLimit: number;
  /** Profile lookups per client IP per `rateWindowSeconds`; 0 switches the limit off. */
  profileLimit: number;
  rateWindowSeconds: number;
  /** Profile lookups per API key per `rateWindowSeconds`, for keys created without a limit of their own. */
  apiKeyProfileLimit: number;
  /** Owner checks per API key per `rateWindowSeconds`, for keys created without a limit of their own. */
  apiKeyOwnerCheckLimit: number;
  /** API keys (and unknown keys) kept in memory per process. */
  apiKeyCacheSize: number;
  cacheMaxAgeSeconds: number;
  /** The `Cache-Control` of profile answers (from CACHE_MAX_AGE). */
  profileCacheControl: string;
  /**
   * Shared caches kept fresh by purging (CACHE_PURGE_URLS, docs/edge-caching.md): base URLs the
   * purger sends `PURGE` requests to; empty: no purging, no `s-maxage`, no tags.
   */
  cachePurgeUrls: readonly string[];
  /** How long shared caches may keep a public answer when purging is on (CACHE_SHARED_MAX_AGE). */
  cacheSharedMaxAgeSeconds: number;
  /** Profiles (and unknown names) kept in memory per process; 0 switches the cache off. */
  profileCacheSize: number;
  /** How long a client may take to send its request headers (Node's headersTimeout). */
  headersTimeoutMs: number;
  /** How long a client may take to send its whole request (Node's requestTimeout). */
  requestTimeoutMs: number;
  /** Open connections per process; further ones are refused until some close. */
  maxConnections: number;
  logLevel: LogLevel;
  workers: number;
  /** Production hides GraphQL field suggestions and error details. */
  production: boolean;
  shutdownTimeoutMs: number;
  /** OpenTelemetry tracing (OTEL_* variables, ./tracing.ts); undefined: off. */
  tracing: TracingConfig | undefined;
  /** Open live-update subscriptions per client IP (the next is refused, 429 / RATE_LIMITED). */
  liveSubscriptionsPerClient: number;
  /** Open live-update subscriptions per process. */
  liveSubscriptionsMax: number;
  /** Days the change log keeps its entries (CHANGE_LOG_RETENTION_DAYS); older ones are pruned. */
  changeLogRetentionDays: number;
  /** Webhook deliveries (docs/webhooks.md). */
  webhooks: WebhookConfig;
  /** Avatar images: fetched, resized and answered by the service (AVATAR_PROXY=on), or 302 to the image (off). */
  avatarProxy: boolean;
  /** Networks avatar fetches may reach although private (AVATAR_PRIVATE_ORIGINS). */
  avatarPrivateOrigins: readonly Network[];
  /** Deadline of one avatar original's whole fetch, redirects included (AVATAR_FETCH_TIMEOUT_MS). */
  avatarFetchTimeoutMs: number;
  /** The most bytes of an avatar original read (AVATAR_MAX_BYTES). */
  avatarMaxBytes: number;
  /** New avatar variants started per second at most; undefined: no bound (AVATAR_RESIZES_PER_SECOND=0). */
  avatarResizesPerSecond: number | undefined;
  /** Where resized avatars are kept on disk: `DATA_DIR/avatar-variants` when DATA_DIR is set; else memory only. */
  avatarCacheDir: string | undefined;
  /** Resized avatar files kept on disk at most (AVATAR_VARIANT_CACHE_FILES). */
  avatarVariantCacheFiles: number;
  /**
   * Trusted documents (PERSISTED_DOCUMENTS, ./persisted-documents.ts): the manifests' documents by
   * id, read at start; empty when the variable is unset.
   */
  persistedDocuments: PersistedDocuments;
}

export interface WebhookConfig {
  /** Key that encrypts stored secrets (WEBHOOK_SECRET_KEY, 32 bytes); undefined: stored as they are. */
  secretKey: Buffer | undefined;
  /** Networks deliveries may reach although private, and over http (WEBHOOK_PRIVATE_ORIGINS). */
  privateOrigins: readonly Network[];
  /** A delivery not answered 2xx within this is a failure (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Waits before each retry (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: readonly number[];
  /** An endpoint whose deliveries all failed this long is disabled (WEBHOOK_DISABLE_AFTER). */
  disableAfterMs: number;
  /** Requests in flight per endpoint (WEBHOOK_CONCURRENCY). */
  concurrency: number;
}

const DATABASE_POOL_MODES = ['session', 'transaction'] as const;
export type DatabasePoolMode = (typeof DATABASE_POOL_MODES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export { ConfigError } from './config-error.js';

type Env = Record<string, string | undefined>;

function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  const parsed = Number(value);
  if (parsed < min || parsed > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return parsed;
}

function databaseUrl(env: Env, name = 'DATABASE_URL'): string | undefined {
  const value = raw(env, name);
  return value === undefined ? undefined : postgresUrl(name, value);
}

/** `value` when it is a PostgreSQL URL; the message names the variable and never a password. */
function postgresUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, 'is not a URL (expected postgres://user@host:port/database)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(name, `must start with postgres:// or postgresql://, got "${url.protocol}//"`);
  }
  return value;
}

/** DATABASE_REPLICA_URLS: comma-separated PostgreSQL URLs, only beside a DATABASE_URL. */
function replicaUrls(env: Env, primary: string | undefined): string[] {
  const value = raw(env, 'DATABASE_REPLICA_URLS');
  if (value === undefined) return [];
  if (primary === undefined) {
    throw new ConfigError('DATABASE_REPLICA_URLS', 'needs DATABASE_URL (the primary, for writes and owner checks)');
  }
  const urls = value.split(',').map((url) => url.trim());
  if (urls.some((url) => url === '')) {
    throw new ConfigError('DATABASE_REPLICA_URLS', 'has an empty entry; separate URLs with single commas');
  }
  return urls.map((url) => postgresUrl('DATABASE_REPLICA_URLS', url));
}

function poolMode(env: Env, primary: string | undefined, listenUrl: string | undefined): DatabasePoolMode {
  const value = raw(env, 'DATABASE_POOL_MODE') ?? DATABASE_DEFAULTS.poolMode;
  if (!(DATABASE_POOL_MODES as readonly string[]).includes(value)) {
    throw new ConfigError('DATABASE_POOL_MODE', `must be session or transaction, got "${value}"`);
  }
  if (value === 'transaction' && primary === undefined) {
    throw new ConfigError('DATABASE_POOL_MODE', 'transaction needs DATABASE_URL (the pooler the service connects to)');
  }
  // LISTEN and the migration lock need a session of their own, which a transaction pooler cannot give.
  if (value === 'transaction' && listenUrl === undefined) {
    throw new ConfigError(
      'DATABASE_LISTEN_URL',
      'is required with DATABASE_POOL_MODE=transaction: a direct connection to the primary (not through the pooler) for change notifications and migrations',
    );
  }
  return value as DatabasePoolMode;
}

function redisUrl(env: Env): string | undefined {
  const value = raw(env, 'REDIS_URL');
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('REDIS_URL', 'is not a URL (expected redis://host:port)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigError('REDIS_URL', `must start with redis:// or rediss://, got "${url.protocol}//"`);
  }
  return value;
}

function rateLimitPrefix(env: Env): string | undefined {
  const value = raw(env, 'RATE_LIMIT_PREFIX');
  if (value === undefined) return undefined;
  // Part of a Redis key: no spaces or control characters, short enough to keep keys small.
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(value)) {
    throw new ConfigError('RATE_LIMIT_PREFIX', `must be 1 to 64 letters, digits, ".", "_", ":" or "-", got "${value}"`);
  }
  return value;
}

/** CACHE_PURGE_URLS: comma-separated http(s) base URLs without credentials, query or fragment. */
function purgeUrls(env: Env): string[] {
  const value = raw(env, 'CACHE_PURGE_URLS');
  if (value === undefined) return [];
  return value.split(',').map((entry) => {
    const text = entry.trim();
    const problem = 'must be comma-separated http:// or https:// URLs without credentials, query or fragment';
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new ConfigError('CACHE_PURGE_URLS', `${problem}, got "${text}"`);
    }
    const credentials = url.username !== '' || url.password !== '';
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || credentials || url.search || url.hash) {
      const shown = credentials ? `${url.protocol}//…@${url.host}${url.pathname}` : text;
      throw new ConfigError('CACHE_PURGE_URLS', `${problem}, got "${shown}"`);
    }
    return url.href.replace(/\/+$/, '');
  });
}

function logLevel(env: Env): LogLevel {
  const value = raw(env, 'LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  }
  return value as LogLevel;
}

function workers(env: Env): number {
  const value = raw(env, 'WORKERS');
  const count = value === 'auto' ? os.availableParallelism() : integer(env, 'WORKERS', 1, 1, 256);
  // The embedded database lives in one process; several need a PostgreSQL server to share.
  if (count > 1 && raw(env, 'DATABASE_URL') === undefined) {
    throw new ConfigError(
      'WORKERS',
      `above 1 needs DATABASE_URL (the embedded database serves one process), got "${value}"`,
    );
  }
  return count;
}

function host(env: Env): string {
  const value = raw(env, 'HOST') ?? '127.0.0.1';
  if (/[\s/]/.test(value)) throw new ConfigError('HOST', `must be a host name or IP address, got "${value}"`);
  return value;
}

/**
 * PUBLIC_URL, or `http://<HOST>:<PORT>`: an absolute http(s) URL without credentials, query or
 * fragment; a path is kept (a service behind a path prefix), the trailing slash dropped.
 */
function publicUrl(env: Env, host: string, port: number): string {
  const value = raw(env, 'PUBLIC_URL');
  if (value === undefined) return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const problem = 'must be an absolute http:// or https:// URL without credentials, query or fragment';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('PUBLIC_URL', `${problem}, got "${value}"`);
  }
  const credentials = url.username !== '' || url.password !== '';
  // The URL parser drops tabs and newlines inside a URL; a value with them is a mistake.
  const stray = /[\s\p{Cc}]/u.test(value);
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || credentials || url.search || url.hash || stray) {
    // A password stays out of the message (it goes to logs).
    const shown = credentials ? `${url.protocol}//…@${url.host}${url.pathname}` : value;
    throw new ConfigError('PUBLIC_URL', `${problem}, got "${shown}"`);
  }
  return url.href.replace(/\/+$/, '');
}

function avatarProxy(env: Env): boolean {
  const value = raw(env, 'AVATAR_PROXY') ?? 'on';
  if (value !== 'on' && value !== 'off') throw new ConfigError('AVATAR_PROXY', `must be on or off, got "${value}"`);
  return value === 'on';
}

/** AVATAR_PRIVATE_ORIGINS: comma-separated CIDRs (`127.0.0.1/32`, `fd00::/8`) or single addresses. */
function privateOrigins(env: Env, name = 'AVATAR_PRIVATE_ORIGINS'): Network[] {
  const value = raw(env, name);
  if (value === undefined) return [];
  return value.split(',').map((entry) => {
    const network = parseNetwork(entry);
    if (network === null) {
      throw new ConfigError(
        name,
        `must be comma-separated networks such as 10.0.0.0/8 or fd00::/8, got "${entry.trim()}"`,
      );
    }
    return network;
  });
}

function webhookConfig(env: Env): WebhookConfig {
  const key = raw(env, 'WEBHOOK_SECRET_KEY');
  const secretKey = key === undefined ? undefined : secretKeyOf(key);
  if (key !== undefined && secretKey === undefined) {
    throw new ConfigError('WEBHOOK_SECRET_KEY', 'must be 32 bytes as 64 hexadecimal digits or in base64');
  }
  const schedule = raw(env, 'WEBHOOK_RETRY_SCHEDULE') ?? '5s,5m,30m,2h,5h,10h,10h';
  const retrySchedule = parseDurationList(schedule);
  if (retrySchedule === undefined || retrySchedule.length > 50) {
    throw new ConfigError(
      'WEBHOOK_RETRY_SCHEDULE',
      `must be comma-separated durations such as 5s,5m,2h (ms, s, m, h or d), got "${schedule}"`,
    );
  }
  const disableAfter = raw(env, 'WEBHOOK_DISABLE_AFTER') ?? '5d';
  const disableAfterMs = parseDuration(disableAfter);
  if (disableAfterMs === undefined || disableAfterMs <= 0) {
    throw new ConfigError('WEBHOOK_DISABLE_AFTER', `must be a duration such as 5d or 12h, got "${disableAfter}"`);
  }
  return {
    secretKey,
    privateOrigins: privateOrigins(env, 'WEBHOOK_PRIVATE_ORIGINS'),
    timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 10, 300_000),
    retrySchedule,
    disableAfterMs,
    concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 8, 1, 1000),
  };
}

/** The 32 bytes of WEBHOOK_SECRET_KEY, given as 64 hex digits or base64; undefined otherwise. */
function secretKeyOf(value: string): Buffer | undefined {
  const hex = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : undefined;
  const base64 = /^[A-Za-z0-9+/_-]{43}=?$/.test(value) ? Buffer.from(value, 'base64') : undefined;
  const key = hex ?? base64;
  return key?.length === 32 ? key : undefined;
}

/**
 * Profiles kept in memory per process by default: a small part of the process's memory for
 * typical profiles (see docs/decisions.md, "The profile cache's default size").
 */
const DEFAULT_PROFILE_CACHE_SIZE = 10_000;
/**
 * The most variant files AVATAR_VARIANT_CACHE_FILES allows: the disk index of that many stays
 * within its memory bound (MAX_INDEX_BYTES, src/avatars/variant-index.ts, whose test holds it).
 */
export const MAX_VARIANT_FILES = 500_000;
/** Variant files on disk at most, by default (AVATAR_VARIANT_CACHE_FILES). */
export const DEFAULT_VARIANT_FILES = 200_000;

export function loadConfig(env: Env = process.env): Config {
  const cacheMaxAge = integer(env, 'CACHE_MAX_AGE', 60, 0, 31_536_000);
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 3_600_000);
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', Math.min(10_000, requestTimeoutMs), 1000, 600_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      'HEADERS_TIMEOUT_MS',
      `must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got "${headersTimeoutMs}"`,
    );
  }
  const port = integer(env, 'PORT', 4000, 0, 65535);
  const listenHost = host(env);
  const primaryUrl = databaseUrl(env);
  const listenUrl = databaseUrl(env, 'DATABASE_LISTEN_URL');
  const dataDir = path.resolve(raw(env, 'DATA_DIR') ?? './.data');
  if (listenUrl !== undefined && primaryUrl === undefined) {
    throw new ConfigError('DATABASE_LISTEN_URL', 'needs DATABASE_URL (the embedded database listens in-process)');
  }
  return {
    port,
    host: listenHost,
    publicUrl: publicUrl(env, listenHost, port),
    databaseUrl: primaryUrl,
    databaseReplicaUrls: replicaUrls(env, primaryUrl),
    databaseListenUrl: listenUrl,
    databasePoolMode: poolMode(env, primaryUrl, listenUrl),
    replicaMaxLagMs: integer(env, 'REPLICA_MAX_LAG_MS', DATABASE_DEFAULTS.replicaMaxLagMs, 0, 3_600_000),
    dataDir,
    dbPoolSize: integer(env, 'DB_POOL_SIZE', DATABASE_DEFAULTS.poolSize, 1, 1000),
    dbConnectTimeoutSeconds: integer(env, 'DB_CONNECT_TIMEOUT', DATABASE_DEFAULTS.connectTimeoutSeconds, 1, 600),
    dbStatementTimeoutMs: integer(env, 'DB_STATEMENT_TIMEOUT_MS', DATABASE_DEFAULTS.statementTimeoutMs, 100, 600_000),
    dbReadTimeoutMs: integer(env, 'DB_READ_TIMEOUT_MS', DATABASE_DEFAULTS.readTimeoutMs, 100, 600_000),
    redisUrl: redisUrl(env),
    rateLimitPrefix: rateLimitPrefix(env),
    trustProxyHops: integer(env, 'TRUST_PROXY_HOPS', 0, 0, 32),
    ownerCheckLimit: integer(env, 'OWNER_CHECK_LIMIT', 10, 1, 1_000_000),
    profileLimit: integer(env, 'PROFILE_LIMIT', 600, 0, 100_000_000),
    rateWindowSeconds: 60,
    apiKeyProfileLimit: integer(env, 'API_KEY_PROFILE_LIMIT', 6000, 1, 100_000_000),
    apiKeyOwnerCheckLimit: integer(env, 'API_KEY_OWNER_CHECK_LIMIT', 100, 1, 1_000_000),
    apiKeyCacheSize: integer(env, 'API_KEY_CACHE_SIZE', 10_000, 1, 10_000_000),
    cacheMaxAgeSeconds: cacheMaxAge,
    profileCacheControl: `public, max-age=${cacheMaxAge}`,
    cachePurgeUrls: purgeUrls(env),
    cacheSharedMaxAgeSeconds: integer(env, 'CACHE_SHARED_MAX_AGE', 86_400, 0, 31_536_000),
    profileCacheSize: integer(env, 'PROFILE_CACHE_SIZE', DEFAULT_PROFILE_CACHE_SIZE, 0, 10_000_000),
    headersTimeoutMs,
    requestTimeoutMs,
    maxConnections: integer(env, 'MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    logLevel: logLevel(env),
    workers: workers(env),
    production: raw(env, 'NODE_ENV') !== 'development' && raw(env, 'NODE_ENV') !== 'test',
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    tracing: tracingConfig(env),
    liveSubscriptionsPerClient: integer(env, 'LIVE_SUBSCRIPTIONS_PER_CLIENT', 20, 1, 1_000_000),
    liveSubscriptionsMax: integer(env, 'LIVE_SUBSCRIPTIONS_MAX', 10_000, 0, 1_000_000),
    changeLogRetentionDays: integer(env, 'CHANGE_LOG_RETENTION_DAYS', 30, 1, 36_500),
    webhooks: webhookConfig(env),
    avatarProxy: avatarProxy(env),
    avatarPrivateOrigins: privateOrigins(env),
    avatarFetchTimeoutMs: integer(env, 'AVATAR_FETCH_TIMEOUT_MS', 5000, 100, 60_000),
    avatarMaxBytes: integer(env, 'AVATAR_MAX_BYTES', 10_485_760, 1024, 104_857_600),
    avatarResizesPerSecond: integer(env, 'AVATAR_RESIZES_PER_SECOND', 20, 0, 10_000) || undefined,
    avatarCacheDir: raw(env, 'DATA_DIR') === undefined ? undefined : path.join(dataDir, 'avatar-variants'),
    avatarVariantCacheFiles: integer(env, 'AVATAR_VARIANT_CACHE_FILES', DEFAULT_VARIANT_FILES, 1, MAX_VARIANT_FILES),
    persistedDocuments: loadPersistedDocuments(persistedDocumentFiles(raw(env, PERSISTED_DOCUMENTS_VARIABLE))),
  };
}
