/**
 * The operations endpoints: `/healthz` (the process answers; no database call), `/readyz`
 * (send traffic here: database reachable, migrations applied, not shutting down) and
 * `/metrics` (Prometheus text).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../http/respond.js';
import type { Router } from '../http/router.js';
import type { Logger } from './logger.js';
import type { Readiness } from './readiness.js';

/** Seconds a load balancer or client should wait before asking a not-ready process again. */
export const NOT_READY_RETRY_AFTER_SECONDS = 5;

export const HEALTH_PATH = '/healthz';
export const READINESS_PATH = '/readyz';
export const METRICS_PATH = '/metrics';

export interface OperationsRoutesDeps {
  readiness: Readiness;
  renderMetrics(): Promise<string>;
  metricsContentType: string;
  logger: Logger;
}

const NO_STORE = { 'Cache-Control': 'no-store' };

export function registerOperationsRoutes(router: Router, deps: OperationsRoutesDeps): void {
  router.on(['GET', 'HEAD'], HEALTH_PATH, (req, res) => sendJson(req, res, 200, { status: 'ok' }, NO_STORE));

  router.on(['GET', 'HEAD'], READINESS_PATH, (req, res) => void answerReadiness(req, res, deps.readiness));
  router.on(['GET', 'HEAD'], METRICS_PATH, (req, res) => void answerMetrics(req, res, deps));
}

async function answerReadiness(req: IncomingMessage, res: ServerResponse, readiness: Readiness): Promise<void> {
  const result = await readiness.check();
  if (result.ready) {
    sendJson(req, res, 200, { status: 'ok' }, NO_STORE);
  } else {
    sendJson(
      req,
      res,
      503,
      { status: 'unavailable', reason: result.reason },
      {
        ...NO_STORE,
        'Retry-After': String(NOT_READY_RETRY_AFTER_SECONDS),
      },
    );
  }
}

async function answerMetrics(req: IncomingMessage, res: ServerResponse, deps: OperationsRoutesDeps): Promise<void> {
  let text: string;
  try {
    text = await deps.renderMetrics();
  } catch (error) {
    deps.logger.error({ err: error }, 'metrics could not be rendered');
    sendJson(req, res, 500, { error: 'Internal server error' }, NO_STORE);
    return;
  }
  res.writeHead(200, {
    ...NO_STORE,
    'Content-Type': deps.metricsContentType,
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}
