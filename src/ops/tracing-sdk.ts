/**
 * The OpenTelemetry side of ./tracing.ts, loaded only when tracing is on. It registers nothing
 * globally (no global tracer provider, context manager or propagator): the spans are made with
 * this module's own tracer, context manager and W3C propagator, so a process — or a test — may
 * start and stop tracing for one App without touching another's.
 *
 * Names and attributes follow the semantic conventions: HTTP server spans `{method} {route}`
 * with `http.request.method`, `http.route`, `http.response.status_code`; GraphQL spans
 * `{type} {name}` with `graphql.operation.type` and `graphql.operation.name`; database spans
 * named by `db.query.summary`, with `db.system.name` `postgresql`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { setGlobalErrorHandler, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { getOperationAST } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { TracingConfig } from '../config/tracing.js';
import type { StatementInfo, StatementObserver } from '../db/statement-observer.js';
import type { Logger } from '../logging/logger.js';

const INSTRUMENTATION_SCOPE = 'name-profile-service';

/** How long a stopping service waits for its last spans to be exported. */
export const FINAL_EXPORT_TIMEOUT_MS = 3000;

const EXPORT_FAILURE_LOG_INTERVAL_MS = 60_000;

// The result is ./tracing.ts's `Tracing`, checked there where it is returned: importing that type
// here would make the two modules import each other.
export function createTracing(config: TracingConfig, logger: Logger) {
  const reportFailure = exportFailureReporter(logger);
  setGlobalErrorHandler(reportFailure);
  const provider = new TracerProvider({
    resource: resourceOf(config),
    sampler: samplerOf(config),
    spanProcessors: [new BatchSpanProcessor({ exporter: exporterOf(config), ...config.batch })],
  });
  const tracer = provider.getTracer(INSTRUMENTATION_SCOPE);
  const contexts = new AsyncLocalStorageContextManager().enable();
  const propagator = new W3CTraceContextPropagator();
  const inSpan = (parent: Context, span: Span) => trace.setSpan(parent, span);

  return {
    traceRequest(req: IncomingMessage, res: ServerResponse, route: string | undefined, answer: () => void) {
      const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
      const span = startServerSpan(tracer, req, route, parent);
      res.once('close', () => endServerSpan(span, res));
      contexts.with(inSpan(parent, span), answer);
    },
    graphqlPlugin: graphqlOperationSpans(tracer, contexts),
    statements: statementSpans(tracer, contexts),
    originFetch: (host: string) => originFetchSpan(tracer, contexts, host),
    // A collector that is away loses spans, never the service: export failures are logged.
    flush: () => provider.forceFlush().catch(reportFailure),
    async shutdown() {
      // A stopping service waits for the last export, but not for a collector that is away
      // (the exporter retries it for a while).
      await withinTime(provider.shutdown().catch(reportFailure), FINAL_EXPORT_TIMEOUT_MS);
      contexts.disable();
    },
  };
}

/** Waits for `work`, at most `ms`. */
async function withinTime(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work, timeout]);
  clearTimeout(timer);
}

function resourceOf(config: TracingConfig) {
  // OTEL_RESOURCE_ATTRIBUTES from the environment; the service's name as configured over it.
  return defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': config.serviceName }));
}

function samplerOf({ sampler, samplerRatio }: TracingConfig): Sampler {
  const root = sampler.endsWith('always_off')
    ? new AlwaysOffSampler()
    : sampler.endsWith('traceidratio')
      ? new TraceIdRatioBasedSampler(samplerRatio)
      : new AlwaysOnSampler();
  // parentbased_*: a request whose caller sampled (or did not) follows the caller's decision.
  return sampler.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

function exporterOf({ tracesUrl, protocol }: TracingConfig): SpanExporter {
  return protocol === 'http/json'
    ? new JsonTraceExporter({ url: tracesUrl })
    : new ProtobufTraceExporter({ url: tracesUrl });
}

/**
 * Logs a failed export, at most once a minute: a collector that is down must not flood the log.
 * OpenTelemetry reports the failures of its background exports to its global error handler, and
 * a flush rejects with them (with an array of errors, even).
 */
function exportFailureReporter(logger: Logger): (error: unknown) => void {
  let lastLogged = Number.NEGATIVE_INFINITY;
  return (error) => {
    const now = Date.now();
    if (now - lastLogged < EXPORT_FAILURE_LOG_INTERVAL_MS) return;
    lastLogged = now;
    const first: unknown = Array.isArray(error) ? error[0] : error;
    const reason = first instanceof Error ? first.message : String(first);
    logger.warn({ reason }, 'tracing: spans could not be exported (logged at most once a minute)');
  };
}

/** The methods the HTTP semantic conventions name; any other is `_OTHER`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'QUERY',
  'TRACE',
]);

function startServerSpan(tracer: Tracer, req: IncomingMessage, route: string | undefined, parent: Context): Span {
  const method = KNOWN_METHODS.has(req.method ?? '') ? (req.method as string) : '_OTHER';
  // The route pattern, never the path: paths carry name IDs, query strings e-mail addresses.
  const attributes =
    route === undefined ? { 'http.request.method': method } : { 'http.request.method': method, 'http.route': route };
  const name = route === undefined ? (method === '_OTHER' ? 'HTTP' : method) : `${method} ${route}`;
  return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
}

function endServerSpan(span: Span, res: ServerResponse): void {
  if (res.writableFinished) {
    span.setAttribute('http.response.status_code', res.statusCode);
    // Server spans: 5xx is an error of this service, 4xx the client's.
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  } else {
    span.setAttribute('error.type', 'aborted');
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * A span around each executed operation. Execution runs in the span's context (the executor is
 * wrapped), so the statements the resolvers cause are its children. Placed after the other
 * plugins, it wraps the executor they chose (compiled or not). The document, variables and
 * results stay out of it: they carry what the client asked for.
 */
function graphqlOperationSpans(tracer: Tracer, contexts: AsyncLocalStorageContextManager): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName ?? undefined);
      const type = operation?.operation ?? 'query';
      const name = operation?.name?.value;
      const parent = contexts.active();
      const span = tracer.startSpan(
        name === undefined ? type : `${type} ${name}`,
        {
          kind: SpanKind.INTERNAL,
          attributes:
            name === undefined
              ? { 'graphql.operation.type': type }
              : { 'graphql.operation.type': type, 'graphql.operation.name': name },
        },
        parent,
      );
      const context = trace.setSpan(parent, span);
      setExecuteFn((executionArgs) => contexts.with(context, () => executeFn(executionArgs)));
      return {
        onExecuteDone({ result }) {
          if (isAsyncIterable(result)) return { onEnd: () => span.end() };
          if (result.errors !== undefined && result.errors.length > 0) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
          return undefined;
        },
      };
    },
  };
}

function statementSpans(tracer: Tracer, contexts: AsyncLocalStorageContextManager): StatementObserver {
  return {
    started(statement) {
      const span = tracer.startSpan(
        statement.summary,
        { kind: SpanKind.CLIENT, attributes: statementAttributes(statement) },
        contexts.active(),
      );
      return (error) => {
        if (error !== undefined) markFailed(span, error);
        span.end();
      };
    },
  };
}

/** `GET` to an avatar origin: its host and port, and the outcome; the URL stays out (it is profile data). */
function originFetchSpan(
  tracer: Tracer,
  contexts: AsyncLocalStorageContextManager,
  host: string,
): (outcome: string, seconds: number) => void {
  const parsed = URL.canParse(`http://${host}`) ? new URL(`http://${host}`) : undefined;
  const attributes: Record<string, string | number> = {
    'http.request.method': 'GET',
    'server.address': parsed?.hostname ?? host,
  };
  if (parsed !== undefined && parsed.port !== '') attributes['server.port'] = Number(parsed.port);
  // performance.now() times: the span ends when the fetch did, not when its outcome was known.
  const startTime = performance.now();
  const span = tracer.startSpan(
    'avatar origin fetch',
    { kind: SpanKind.CLIENT, attributes, startTime },
    contexts.active(),
  );
  return (outcome, seconds) => {
    span.setAttribute('avatar.fetch.outcome', outcome);
    if (outcome !== 'ok') {
      span.setAttribute('error.type', outcome);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    // Never past now: the fetch's own clock (the origin process's) started a little before this span.
    span.end(Math.min(startTime + seconds * 1000, performance.now()));
  };
}

function statementAttributes(statement: StatementInfo): Record<string, string | number> {
  const attributes: Record<string, string | number> = {
    'db.system.name': 'postgresql',
    'db.query.summary': statement.summary,
    'db.operation.name': statement.operation,
  };
  if (statement.collection !== undefined) attributes['db.collection.name'] = statement.collection;
  if (statement.server !== undefined) {
    attributes['db.namespace'] = statement.server.namespace;
    attributes['server.address'] = statement.server.address;
    attributes['server.port'] = statement.server.port;
  }
  return attributes;
}

/** The SQLSTATE of a failed statement, never its message: messages quote the values refused. */
function markFailed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown } | null)?.code;
  const sqlState = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  if (sqlState !== undefined) span.setAttribute('db.response.status_code', sqlState);
  span.setAttribute('error.type', sqlState ?? (error instanceof Error ? error.name : 'unknown'));
  span.setStatus({ code: SpanStatusCode.ERROR });
}
