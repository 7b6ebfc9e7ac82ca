/**
 * Writing answers. Every answer of the service goes through here or through Yoga, so the
 * content type and the error body shape (`{"error": "..."}`) are the same everywhere.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Sends a ready body; HEAD answers like GET, with the same headers, without the body. */
export function sendBody(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: Buffer | string,
  headers: OutgoingHttpHeaders,
): void {
  res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
): void {
  sendBody(req, res, status, JSON.stringify(body), { ...headers, 'Content-Type': JSON_CONTENT_TYPE });
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

/** 304: the client's copy is current; the validators and caching headers, no body. */
export function sendNotModified(res: ServerResponse, headers: OutgoingHttpHeaders): void {
  res.writeHead(304, headers);
  res.end();
}

/**
 * Whether two header names are the same name (ASCII case-insensitive, as HTTP compares them),
 * without lower-cased copies: answers compare their header names on every request.
 */
export function sameHeaderName(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y && lowerAscii(x) !== lowerAscii(y)) return false;
  }
  return true;
}

const lowerAscii = (code: number): number => (code >= 65 && code <= 90 ? code + 32 : code);
