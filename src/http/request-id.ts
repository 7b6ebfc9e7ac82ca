import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { earlyHeaderOf } from './service-response.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';

// A client's id is echoed only when it cannot break a log line or a header.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's `X-Request-Id` when it is sane, a new UUID otherwise. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The id the request handler gave this request's answer (./request-handler.ts), if it has one. */
export function requestIdOfAnswer(res: ServerResponse): string | undefined {
  return earlyHeaderOf(res, REQUEST_ID_HEADER);
}
