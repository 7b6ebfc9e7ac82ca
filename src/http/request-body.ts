/**
 * Reading a request body with an upper bound, so no client can make the server buffer more than
 * the limit: a declared `Content-Length` over it is refused before a byte is read, a chunked body
 * as soon as it grows past it.
 */
import type { IncomingMessage } from 'node:http';

/** The 413 answer's message, on REST and GraphQL alike. */
export const requestBodyTooLargeMessage = (limitBytes: number): string =>
  `Request body too large, the limit is ${limitBytes} bytes`;

/** `aborted`: the client went away before the body was complete; there is no one to answer. */
export type BodyResult = { ok: true; body: Buffer } | { ok: false; reason: 'too-large' | 'aborted' };

export function declaredTooLarge(req: IncomingMessage, limitBytes: number): boolean {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > limitBytes;
}

/**
 * The whole body, or `too-large` (the rest is then left unread: answer with `Connection: close`).
 *
 * A body with a declared length that has all arrived is taken from the request's buffer at once:
 * node:http pushes a small body into it in the turn that parsed the headers, so one microtask
 * after the `request` event it is there. Reading it through the stream's events instead resumes
 * the stream, emits `data` and then `end` on later ticks, work a small request notices
 * (docs/decisions.md, "Request bodies taken from the buffer"). Anything else — a
 * chunked body, one still on its way, one larger than the buffer holds — is read through the
 * events.
 */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<BodyResult> {
  if (declaredTooLarge(req, limitBytes)) return Promise.resolve({ ok: false, reason: 'too-large' });
  const declared = declaredLength(req);
  if (declared === undefined) return readThroughEvents(req, limitBytes);
  const arrived = bufferedBody(req, declared);
  if (arrived !== undefined) return Promise.resolve({ ok: true, body: arrived });
  // A promise's turn, not a callback of the body's events: those run outside the request's
  // async context, which tracing's spans (src/ops/tracing-sdk.ts) follow.
  return Promise.resolve().then(() => {
    const body = bufferedBody(req, declared);
    return body === undefined ? readThroughEvents(req, limitBytes) : { ok: true, body };
  });
}

/** `Content-Length` as a number; node:http refuses a request with it and a chunked coding. */
function declaredLength(req: IncomingMessage): number | undefined {
  const declared = req.headers['content-length'];
  if (declared === undefined) return undefined;
  const length = Number(declared);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/** The body when every declared byte is in the request's buffer and nothing has read from it. */
function bufferedBody(req: IncomingMessage, declared: number): Buffer | undefined {
  if (req.readableLength !== declared || req.readableFlowing === true || req.readableDidRead) return undefined;
  // A decoding set on the stream would make `read` give a string and the bytes would be gone.
  if (req.readableEncoding !== null) return undefined;
  if (declared === 0) return Buffer.alloc(0);
  const body: unknown = req.read();
  return Buffer.isBuffer(body) && body.byteLength === declared ? body : undefined;
}

function readThroughEvents(req: IncomingMessage, limitBytes: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limitBytes) {
        cleanup();
        req.pause();
        resolve({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      // A small body arrives in one chunk: no copy of it then.
      const [only] = chunks;
      resolve({ ok: true, body: chunks.length === 1 && only !== undefined ? only : Buffer.concat(chunks, total) });
    };
    const onError = () => {
      cleanup();
      resolve({ ok: false, reason: 'aborted' });
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** The media type of a `Content-Type` header, lower case, without parameters. */
export function mediaTypeOf(req: IncomingMessage): string | undefined {
  return req.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
}
