/**
 * Tracing settings: the standard OpenTelemetry environment variables, read and validated here
 * with the rest of the configuration. The SDK packages of OpenTelemetry 3.x no longer read the
 * sampler and batch variables themselves, and reading them here gives a bad value the same
 * one-line ConfigError as any other setting. Tracing is off (undefined) unless an OTLP endpoint
 * is set.
 *
 * The exporter still reads what concerns only its HTTP requests from the process environment:
 * OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, _TIMEOUT, _COMPRESSION and the certificate files.
 */
import { ConfigError } from './config-error.js';

const TRACING_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
type TracingProtocol = (typeof TRACING_PROTOCOLS)[number];

const TRACING_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
type TracingSamplerName = (typeof TRACING_SAMPLERS)[number];

const DEFAULT_SERVICE_NAME = 'name-profile-service';

export interface TracingConfig {
  /** Where spans are posted: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  tracesUrl: string;
  protocol: TracingProtocol;
  /** OTEL_SERVICE_NAME; further resource attributes come from OTEL_RESOURCE_ATTRIBUTES. */
  serviceName: string;
  sampler: TracingSamplerName;
  /** OTEL_TRACES_SAMPLER_ARG: the ratio of the `traceidratio` samplers. */
  samplerRatio: number;
  /** The batch span processor (OTEL_BSP_*). */
  batch: {
    scheduledDelayMillis: number;
    exportTimeoutMillis: number;
    maxQueueSize: number;
    maxExportBatchSize: number;
  };
}

type Env = Record<string, string | undefined>;

function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = raw(env, name)?.toLowerCase() ?? fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`);
  }
  return value as T;
}

function whole(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return parsed;
}

function httpUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `is not a URL (expected http://collector:4318), got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must start with http:// or https:// (OTLP over HTTP), got "${url.protocol}//"`);
  }
  return url;
}

/** The spec's rule: the signal's own endpoint is used as is, the general one gets `v1/traces` appended. */
function tracesUrl(env: Env): string | undefined {
  const traces = raw(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (traces !== undefined) return httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces).href;
  const general = raw(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (general === undefined) return undefined;
  const { href } = httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', general);
  return `${href.endsWith('/') ? href : `${href}/`}v1/traces`;
}

function ratio(env: Env): number {
  const value = raw(env, 'OTEL_TRACES_SAMPLER_ARG');
  if (value === undefined) return 1;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0 || parsed > 1) {
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a ratio from 0 to 1, got "${value}"`);
  }
  return parsed;
}

function batch(env: Env): TracingConfig['batch'] {
  const maxQueueSize = whole(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1, 1_000_000);
  return {
    scheduledDelayMillis: whole(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0, 3_600_000),
    exportTimeoutMillis: whole(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1, 3_600_000),
    maxQueueSize,
    maxExportBatchSize: whole(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', Math.min(512, maxQueueSize), 1, maxQueueSize),
  };
}

/** The tracing settings, or undefined when tracing is off. */
export function tracingConfig(env: Env): TracingConfig | undefined {
  if (raw(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporter = oneOf(env, 'OTEL_TRACES_EXPORTER', ['otlp', 'none'], 'otlp');
  const url = tracesUrl(env);
  if (url === undefined || exporter === 'none') return undefined;
  const protocolVariable =
    raw(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') === undefined
      ? 'OTEL_EXPORTER_OTLP_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL';
  return {
    tracesUrl: url,
    protocol: oneOf(env, protocolVariable, TRACING_PROTOCOLS, 'http/protobuf'),
    serviceName: raw(env, 'OTEL_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME,
    sampler: oneOf(env, 'OTEL_TRACES_SAMPLER', TRACING_SAMPLERS, 'parentbased_always_on'),
    samplerRatio: ratio(env),
    batch: batch(env),
  };
}
