/**
 * Tracing with OpenTelemetry, when an OTLP endpoint is configured (src/config/tracing.ts). This
 * module imports nothing of OpenTelemetry: the SDK (./tracing-sdk.ts) is loaded with a dynamic
 * import only when tracing is on, so with it off no OpenTelemetry module is loaded and the
 * request path runs exactly as without tracing (the composition root does not wire it in).
 *
 * What is traced (docs/operations.md "Tracing"): each HTTP request is a SERVER span, a child of
 * the caller's span when the request carries a W3C `traceparent`; within it each executed GraphQL
 * operation is a span, each SQL statement a CLIENT span, and each fetch of an avatar original a
 * CLIENT span. Spans carry route patterns, operation
 * names and statement summaries, never a URL, a query string, a body, variables or parameters.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { TracingConfig } from '../config/tracing.js';
import type { StatementObserver } from '../db/statement-observer.js';
import type { Logger } from '../logging/logger.js';

export interface Tracing {
  /**
   * Answers a request within its SERVER span. `route` is the pattern it matched, undefined when
   * it matched none; the span ends when the response is done or the client has gone.
   */
  traceRequest(req: IncomingMessage, res: ServerResponse, route: string | undefined, answer: () => void): void;
  /** Yoga plugin: a span around each executed operation, the parent of the resolvers' statements. */
  readonly graphqlPlugin: Plugin;
  /** Makes a CLIENT span of each SQL statement (see DatabaseHandle.observeStatements). */
  readonly statements: StatementObserver;
  /**
   * Starts a CLIENT span for the fetch of an avatar original from `host` (host and port, never
   * the URL); the returned function ends it with the fetch's outcome, `seconds` after its start
   * (the outcome may be known only later, after the first resize of the fetched bytes).
   */
  originFetch(host: string): (outcome: string, seconds: number) => void;
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

/** The tracing of `config`, or undefined when tracing is off (nothing is loaded then). */
export async function startTracing(config: TracingConfig | undefined, logger: Logger): Promise<Tracing | undefined> {
  if (config === undefined) return undefined;
  const { createTracing } = await import('./tracing-sdk.js');
  const tracing: Tracing = createTracing(config, logger);
  // Origin and path only: a URL may carry credentials.
  const { origin, pathname } = new URL(config.tracesUrl);
  logger.info({ endpoint: `${origin}${pathname}`, protocol: config.protocol, sampler: config.sampler }, 'tracing on');
  return tracing;
}
