/**
 * Writing JSON answers. Every answer of the service goes through here or through Yoga, so the
 * content type and the error body shape (`{"error": "..."}`) are the same everywhere.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': JSON_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(payload),
  });
  // HEAD answers like GET, with the same headers, without the body.
  res.end(req.method === 'HEAD' ? undefined : payload);
}

export function sendError(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  headers: OutgoingHttpHeaders = {},
): void {
  sendJson(req, res, status, { error: message }, headers);
}
