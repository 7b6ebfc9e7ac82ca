/**
 * The operations endpoints: `/healthz` (the process answers; no database call), `/readyz`
 * (send traffic here: database reachable, migrations applied, not shutting down) and
 * `/metrics` (Prometheus text).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ReplicaStatus } from '../db/replicas.js';
import { sendJson } from '../http/respond.js';
import type { Router } from '../http/router.js';
import type { Logger } from '../logging/logger.js';
import type { Readiness } from './readiness.js';

/** Seconds a load balancer or client should wait before asking a not-ready process again. */
const NOT_READY_RETRY_AFTER_SECONDS = 5;

export const HEALTH_PATH = '/healthz';
export const READINESS_PATH = '/readyz';
const METRICS_PATH = '/metrics';

export interface OperationsRoutesDeps {
  readiness: Readiness;
  /** Each read replica's state, shown by /readyz; undefined without replicas. */
  replicas?: () => ReplicaStatus[];
  renderMetrics(): Promise<string>;
  metricsContentType: string;
  logger: Logger;
}

const NO_STORE = { 'Cache-Control': 'no-store' };

export function registerOperationsRoutes(router: Router, deps: OperationsRoutesDeps): void {
  router.on(['GET', 'HEAD'], HEALTH_PATH, (req, res) => sendJson(req, res, 200, { status: 'ok' }, NO_STORE));

  router.on(['GET', 'HEAD'], READINESS_PATH, (req, res) => void answerReadiness(req, res, deps));
  router.on(['GET', 'HEAD'], METRICS_PATH, (req, res) => void answerMetrics(req, res, deps));
}

/**
 * Ready while the primary answers; replicas are reported, never a reason to be unready (reads
 * go to the primary without them). A replica's error text is not shown: probes may reach the
 * load balancer's network, so the body says only what state each replica is in.
 */
async function answerReadiness(req: IncomingMessage, res: ServerResponse, deps: OperationsRoutesDeps): Promise<void> {
  const result = await deps.readiness.check();
  const replicas = deps.replicas?.().map(({ replica, inUse, reason, lagMs }) => ({ replica, inUse, reason, lagMs }));
  if (result.ready) {
    sendJson(req, res, 200, { status: 'ok', ...(replicas === undefined ? {} : { replicas }) }, NO_STORE);
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
