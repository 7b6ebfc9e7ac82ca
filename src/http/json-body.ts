/**
 * A JSON object in a request body, read the one way every REST path with a body reads it
 * (`POST /api/profiles`, the webhook endpoints): `Content-Type: application/json` in UTF-8,
 * optionally compressed (./body-coding.ts), at most a given size as sent and once decoded, and an
 * object at the top. Whatever else arrives is answered here: 415, 413 or 400, so a route gets an
 * object or has nothing left to do.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { decodeBody, unsupportedCharset, unsupportedCoding } from './body-coding.js';
import { declaredTooLarge, mediaTypeOf, readBody, requestBodyTooLargeMessage } from './request-body.js';
import { sendError } from './respond.js';

export const INVALID_JSON_BODY_MESSAGE = 'Invalid JSON body';
export const EXPECTED_JSON_MESSAGE = 'Expected application/json';

/** A JSON object as parsed: its keys' values are whatever the client sent. */
export type JsonObject = Readonly<Record<string, unknown>>;

/**
 * The body's JSON object, or undefined when the request was answered instead (or its client went
 * away). `headers` go on every refusal (e.g. `Cache-Control: no-store`).
 */
export async function readJsonObject(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
  headers: OutgoingHttpHeaders,
): Promise<JsonObject | undefined> {
  if (mediaTypeOf(req) !== 'application/json') {
    sendError(req, res, 415, EXPECTED_JSON_MESSAGE, headers);
    return undefined;
  }
  const tooLargeMessage = requestBodyTooLargeMessage(maxBytes);
  // The rest of the body stays unread: closing the connection is cheaper than draining it.
  const refuse = (status: number, message: string) =>
    sendError(req, res, status, message, { ...headers, Connection: 'close' });
  // The same body codings and charsets as `/graphql`.
  const unsupported =
    unsupportedCharset(req.headers['content-type']) ?? unsupportedCoding(req.headers['content-encoding']);
  if (unsupported !== undefined) {
    refuse(unsupported.status, unsupported.message);
    return undefined;
  }
  if (declaredTooLarge(req, maxBytes)) {
    refuse(413, tooLargeMessage);
    return undefined;
  }
  const read = await readBody(req, maxBytes);
  if (!read.ok) {
    if (read.reason === 'too-large') refuse(413, tooLargeMessage);
    else res.destroy();
    return undefined;
  }
  const decoded = await decodeBody(read.body, req.headers['content-encoding'], maxBytes, tooLargeMessage);
  if (!decoded.ok) {
    refuse(decoded.status, decoded.message);
    return undefined;
  }
  const parsed = jsonObjectOf(decoded.body);
  if (parsed === undefined) sendError(req, res, 400, INVALID_JSON_BODY_MESSAGE, headers);
  return parsed;
}

/** The object a body holds, or undefined for anything else (not UTF-8, not JSON, not an object). */
function jsonObjectOf(body: Buffer): JsonObject | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return undefined;
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as JsonObject) : undefined;
}
