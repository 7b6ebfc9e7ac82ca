/**
 * The frame every REST handler shares, written once: the service's view of the request, and,
 * whatever the handler throws, the contract's answer for it (`sendServiceError`). A handler only
 * reads its parameters, calls the service and writes its answer.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Params, RouteHandler } from '../http/router.js';
import { serviceRequestFor } from '../http/service-request.js';
import type { ServiceRequest } from '../service/request.js';
import type { RestDependencies } from './dependencies.js';
import { sendServiceError } from './error-responses.js';

export interface ServiceCall {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly params: Params;
  /** Who asks (the rate-limit key) and the request id, as the service wants them. */
  readonly request: ServiceRequest;
}

export interface ServiceHandlerOptions {
  /** Headers an error answer carries besides the error's own, e.g. `Cache-Control: no-store`. */
  errorHeaders?: (req: IncomingMessage) => OutgoingHttpHeaders;
}

export function serviceHandler(
  deps: Pick<RestDependencies, 'config' | 'logger'>,
  handle: (call: ServiceCall) => Promise<void>,
  options: ServiceHandlerOptions = {},
): RouteHandler {
  return (req, res, params) => {
    void (async () => {
      const request = serviceRequestFor(req, res, deps.config.trustProxyHops);
      try {
        await handle({ req, res, params, request });
      } catch (error) {
        sendServiceError(req, res, error, options.errorHeaders?.(req) ?? {}, deps.logger);
      }
    })();
  };
}
