import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/config.js';

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}

describe('configuration', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: path.resolve('./.data'),
      redisUrl: undefined,
      trustProxyHops: 0,
      ownerCheckLimit: 10,
      logLevel: 'info',
      workers: 1,
      production: true,
      changeLogRetentionDays: 30,
    });
    expect(loadConfig({}).profileLimit).toBeGreaterThan(10);
    expect(loadConfig({ CHANGE_LOG_RETENTION_DAYS: '1' }).changeLogRetentionDays).toBe(1);
  });

  it('reads every variable of the contract', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://app:secret@db.internal:5432/profiles',
      DATA_DIR: '/var/lib/profiles',
      REDIS_URL: 'redis://cache:6379',
      TRUST_PROXY_HOPS: '2',
      OWNER_CHECK_LIMIT: '5',
      PROFILE_LIMIT: '0',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://app:secret@db.internal:5432/profiles',
      dataDir: '/var/lib/profiles',
      redisUrl: 'redis://cache:6379',
      trustProxyHops: 2,
      ownerCheckLimit: 5,
      profileLimit: 0,
      logLevel: 'debug',
    });
  });

  it('treats empty and blank values as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '   ', LOG_LEVEL: ' ' })).toMatchObject({
      port: 4000,
      databaseUrl: undefined,
      logLevel: 'info',
    });
  });

  it('runs one worker per core with WORKERS=auto', () => {
    expect(loadConfig({ WORKERS: 'auto', DATABASE_URL: 'postgres://app@db.internal/profiles' }).workers).toBe(
      os.availableParallelism(),
    );
  });

  it('is not in production mode for development and test', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).production).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test' }).production).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production' }).production).toBe(true);
  });

  const badValues: Array<[string, string]> = [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['HOST', 'local host'],
    ['HOST', 'a/b'],
    ['DATABASE_URL', 'not a url'],
    ['DATABASE_URL', 'mysql://root@localhost/db'],
    ['REDIS_URL', 'localhost:6379'],
    ['REDIS_URL', 'http://cache:6379'],
    ['TRUST_PROXY_HOPS', 'yes'],
    ['TRUST_PROXY_HOPS', '33'],
    ['OWNER_CHECK_LIMIT', '0'],
    ['OWNER_CHECK_LIMIT', 'ten'],
    ['PROFILE_LIMIT', '-5'],
    ['LOG_LEVEL', 'loud'],
    ['WORKERS', '0'],
    ['WORKERS', 'many'],
    ['DB_POOL_SIZE', '0'],
    ['DB_CONNECT_TIMEOUT', '0'],
    ['DB_STATEMENT_TIMEOUT_MS', '50'],
    ['DB_READ_TIMEOUT_MS', '50'],
    ['CACHE_MAX_AGE', 'forever'],
    ['SHUTDOWN_TIMEOUT_MS', '1e3'],
    ['PUBLIC_URL', 'profiles.example.org'],
    ['PUBLIC_URL', 'ftp://profiles.example.org'],
    ['PUBLIC_URL', 'https://profiles.example.org/?x=1'],
    ['PUBLIC_URL', 'https://profiles.example.org/#top'],
    ['PUBLIC_URL', 'https://profiles.exa mple.org'],
    ['PUBLIC_URL', 'https://user:pw@profiles.example.org'],
    ['CACHE_PURGE_URLS', 'varnish:6081'],
    ['CACHE_PURGE_URLS', 'ftp://varnish:6081'],
    ['CACHE_PURGE_URLS', 'http://admin:secret@varnish:6081'],
    ['CACHE_PURGE_URLS', 'http://varnish:6081/?purge=1'],
    ['CACHE_PURGE_URLS', 'http://a:6081,,http://b:6081'],
    ['CACHE_SHARED_MAX_AGE', '1d'],
    ['AVATAR_PROXY', 'yes'],
    ['AVATAR_PRIVATE_ORIGINS', '10.0.0.0/33'],
    ['AVATAR_PRIVATE_ORIGINS', 'intranet.example/8'],
    ['AVATAR_PRIVATE_ORIGINS', '10.0.0.0/8,,fd00::/8'],
    ['AVATAR_FETCH_TIMEOUT_MS', '50'],
    ['AVATAR_FETCH_TIMEOUT_MS', 'soon'],
    ['AVATAR_MAX_BYTES', '100'],
    ['AVATAR_MAX_BYTES', '1e7'],
    ['AVATAR_RESIZES_PER_SECOND', '-1'],
    ['AVATAR_RESIZES_PER_SECOND', '2.5'],
    ['AVATAR_RESIZES_PER_SECOND', '10001'],
    ['CHANGE_LOG_RETENTION_DAYS', '0'],
    ['CHANGE_LOG_RETENTION_DAYS', '1.5'],
    ['CHANGE_LOG_RETENTION_DAYS', 'month'],
    ['AVATAR_VARIANT_CACHE_FILES', '0'],
    ['AVATAR_VARIANT_CACHE_FILES', '500001'],
    ['AVATAR_VARIANT_CACHE_FILES', '2e5'],
    ['AVATAR_VARIANT_CACHE_FILES', 'lots'],
  ];

  it('reads the shared caches to purge, and their s-maxage (a day by default)', () => {
    expect(loadConfig({})).toMatchObject({ cachePurgeUrls: [], cacheSharedMaxAgeSeconds: 86_400 });
    expect(
      loadConfig({
        CACHE_PURGE_URLS: 'http://127.0.0.1:6081/, https://edge.example.org',
        CACHE_SHARED_MAX_AGE: '3600',
      }),
    ).toMatchObject({
      cachePurgeUrls: ['http://127.0.0.1:6081', 'https://edge.example.org'],
      cacheSharedMaxAgeSeconds: 3600,
    });
  });

  it('never shows a purge URL password in its error', () => {
    expect(errorOf({ CACHE_PURGE_URLS: 'http://admin:secret@varnish:6081' }).message).not.toContain('secret');
  });

  it('fetches avatar originals by default, from public addresses, within the contract bounds', () => {
    expect(loadConfig({})).toMatchObject({
      avatarProxy: true,
      avatarPrivateOrigins: [],
      avatarFetchTimeoutMs: 5000,
      avatarMaxBytes: 10_485_760,
      avatarResizesPerSecond: 20,
      avatarCacheDir: undefined,
      avatarVariantCacheFiles: 200_000,
    });
    // 0: no bound on new variants per second.
    expect(loadConfig({ AVATAR_RESIZES_PER_SECOND: '0' }).avatarResizesPerSecond).toBeUndefined();
    expect(
      loadConfig({
        AVATAR_PROXY: 'off',
        AVATAR_PRIVATE_ORIGINS: ' 10.0.0.0/8 , fd00::/8,192.168.1.20',
        AVATAR_FETCH_TIMEOUT_MS: '2500',
        AVATAR_MAX_BYTES: '1048576',
        AVATAR_RESIZES_PER_SECOND: '5',
        AVATAR_VARIANT_CACHE_FILES: '50000',
        DATA_DIR: '/var/lib/profiles',
      }),
    ).toMatchObject({
      avatarProxy: false,
      avatarPrivateOrigins: [
        { address: '10.0.0.0', prefix: 8, family: 'ipv4' },
        { address: 'fd00::', prefix: 8, family: 'ipv6' },
        { address: '192.168.1.20', prefix: 32, family: 'ipv4' },
      ],
      avatarFetchTimeoutMs: 2500,
      avatarMaxBytes: 1_048_576,
      avatarResizesPerSecond: 5,
      avatarCacheDir: path.join('/var/lib/profiles', 'avatar-variants'),
      avatarVariantCacheFiles: 50_000,
    });
  });

  it.each(badValues)('rejects %s=%j with one line naming the variable', (variable, value) => {
    const error = errorOf({ [variable]: value });
    expect(error.variable).toBe(variable);
    expect(error.message).toContain(variable);
    expect(error.message).not.toContain('\n');
  });

  describe('several database servers', () => {
    const primary = 'postgres://app:secret@pgbouncer:6432/profiles';

    it('defaults to one server in session mode', () => {
      expect(loadConfig({ DATABASE_URL: primary })).toMatchObject({
        databaseReplicaUrls: [],
        databaseListenUrl: undefined,
        databasePoolMode: 'session',
        replicaMaxLagMs: 5000,
      });
    });

    it('reads replicas, the listening session, the pool mode and the lag bound', () => {
      const config = loadConfig({
        DATABASE_URL: primary,
        DATABASE_REPLICA_URLS: 'postgres://app@replica-1/profiles, postgresql://app@replica-2:5433/profiles',
        DATABASE_LISTEN_URL: 'postgres://app@primary:5432/profiles',
        DATABASE_POOL_MODE: 'transaction',
        REPLICA_MAX_LAG_MS: '1500',
      });
      expect(config.databaseReplicaUrls).toEqual([
        'postgres://app@replica-1/profiles',
        'postgresql://app@replica-2:5433/profiles',
      ]);
      expect(config).toMatchObject({
        databaseListenUrl: 'postgres://app@primary:5432/profiles',
        databasePoolMode: 'transaction',
        replicaMaxLagMs: 1500,
      });
    });

    it.each<[Record<string, string>, string, RegExp]>([
      [
        { DATABASE_POOL_MODE: 'transaction', DATABASE_URL: primary },
        'DATABASE_LISTEN_URL',
        /is required with DATABASE_POOL_MODE=transaction/,
      ],
      [{ DATABASE_POOL_MODE: 'statement', DATABASE_URL: primary }, 'DATABASE_POOL_MODE', /session or transaction/],
      [{ DATABASE_REPLICA_URLS: 'postgres://replica/db' }, 'DATABASE_REPLICA_URLS', /needs DATABASE_URL/],
      [
        { DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'postgres://a/db,,postgres://b/db' },
        'DATABASE_REPLICA_URLS',
        /empty entry/,
      ],
      [
        { DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'mysql://replica/db' },
        'DATABASE_REPLICA_URLS',
        /postgres:\/\//,
      ],
      [{ DATABASE_LISTEN_URL: 'postgres://primary/db' }, 'DATABASE_LISTEN_URL', /needs DATABASE_URL/],
      [{ DATABASE_URL: primary, REPLICA_MAX_LAG_MS: 'soon' }, 'REPLICA_MAX_LAG_MS', /whole number/],
    ])('refuses %j with one line naming %s', (env, variable, message) => {
      const error = errorOf(env);
      expect(error.variable).toBe(variable);
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain('\n');
      expect(error.message).not.toContain('secret');
    });
  });

  it('does not repeat a database password in its error', () => {
    const error = errorOf({ DATABASE_URL: 'mysql://root:hunter2@localhost/db' });
    expect(error.message).not.toContain('hunter2');
    expect(errorOf({ PUBLIC_URL: 'https://root:hunter2@example.org' }).message).not.toContain('hunter2');
  });

  it('takes PUBLIC_URL for links, without its trailing slash, and defaults to the listening address', () => {
    expect(loadConfig({}).publicUrl).toBe('http://127.0.0.1:4000');
    expect(loadConfig({ HOST: '::1', PORT: '8080' }).publicUrl).toBe('http://[::1]:8080');
    expect(loadConfig({ PUBLIC_URL: 'https://Profiles.Example.org/' }).publicUrl).toBe('https://profiles.example.org');
    expect(loadConfig({ PUBLIC_URL: 'https://example.org/names/' }).publicUrl).toBe('https://example.org/names');
  });
});

describe('tracing configuration', () => {
  it('is off without an OTLP endpoint, or when the SDK or the trace exporter is switched off', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }).tracing).toBeUndefined();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
  });

  it('has the standard defaults', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      serviceName: 'name-profile-service',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      batch: { scheduledDelayMillis: 5000, exportTimeoutMillis: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 },
    });
  });

  it('reads the standard variables', () => {
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp/',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'profiles-eu',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_BSP_SCHEDULE_DELAY: '1000',
        OTEL_BSP_EXPORT_TIMEOUT: '2000',
        OTEL_BSP_MAX_QUEUE_SIZE: '100',
      }).tracing,
    ).toEqual({
      tracesUrl: 'http://collector:4318/otlp/v1/traces',
      protocol: 'http/json',
      serviceName: 'profiles-eu',
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
      batch: { scheduledDelayMillis: 1000, exportTimeoutMillis: 2000, maxQueueSize: 100, maxExportBatchSize: 100 },
    });
    // The traces endpoint is taken as it is, over the general one.
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/ingest',
      }).tracing?.tracesUrl,
    ).toBe('https://traces.example/ingest');
  });

  it('refuses what it cannot do, naming the variable', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(errorOf({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).variable).toBe('OTEL_EXPORTER_OTLP_PROTOCOL');
    expect(errorOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).variable).toBe('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(errorOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://c:4317' }).variable).toBe(
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    );
    expect(errorOf({ ...endpoint, OTEL_TRACES_SAMPLER: 'jaeger_remote' }).variable).toBe('OTEL_TRACES_SAMPLER');
    expect(errorOf({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: '2' }).variable).toBe('OTEL_TRACES_SAMPLER_ARG');
    expect(errorOf({ ...endpoint, OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20' }).variable).toBe(
      'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    );
    expect(errorOf({ ...endpoint, OTEL_TRACES_EXPORTER: 'zipkin' }).variable).toBe('OTEL_TRACES_EXPORTER');
  });
});
