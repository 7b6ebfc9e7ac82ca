/**
 * One log line and one metric observation per request, written when the answer is done (or the
 * client gave up). The line names the route pattern, never the raw URL: owner-check query
 * strings carry e-mail addresses.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestIdOfAnswer } from '../http/request-id.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from './metrics.js';
import type { RequestNotes } from './request-notes.js';

/** The status label of a request whose client hung up before the answer was complete. */
const ABORTED_STATUS = 'aborted';

/** The label of a request that matched no route (404s of every kind). */
export const UNMATCHED_ROUTE = 'unmatched';

export interface RequestObserverDeps {
  logger: Logger;
  metrics: Metrics;
  notes: RequestNotes;
  /** Routes whose request lines are logged at debug: probes arrive every few seconds. */
  quietRoutes: ReadonlySet<string>;
}

/** Observes one request; `route` is the pattern it matched, or UNMATCHED_ROUTE. */
export type RequestObserver = (req: IncomingMessage, res: ServerResponse, route: string) => void;

export function createRequestObserver({ logger, metrics, notes, quietRoutes }: RequestObserverDeps): RequestObserver {
  return (req, res, route) => {
    const started = process.hrtime.bigint();
    metrics.httpRequestsInFlight.inc();
    res.once('close', () => {
      metrics.httpRequestsInFlight.dec();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const method = req.method ?? 'UNKNOWN';
      const status = res.writableFinished ? String(res.statusCode) : ABORTED_STATUS;
      // http_requests_total counts these observations (./metrics.ts).
      metrics.httpRequestDuration.series(method, route, status).observe(seconds);

      // Server errors (503 while the database is away included) stay visible at LOG_LEVEL=warn.
      const level = res.writableFinished && res.statusCode >= 500 ? 'warn' : quietRoutes.has(route) ? 'debug' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const requestId = requestIdOfAnswer(res);
      const note = notes.get(req);
      const operations = note?.graphqlOperations;
      const line = {
        requestId,
        method,
        route,
        status: res.writableFinished ? res.statusCode : ABORTED_STATUS,
        durationMs: Math.round(seconds * 1e6) / 1e3,
        ...(operations === undefined ? {} : { operations }),
        ...(note?.apiKeyId === undefined ? {} : { apiKey: note.apiKeyId }),
      };
      logger[level](line, 'request');
    });
  };
}
