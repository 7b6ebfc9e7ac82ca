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

/** The whole body, or `too-large` (the rest is then left unread: answer with `Connection: close`). */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<BodyResult> {
  if (declaredTooLarge(req, limitBytes)) return Promise.resolve({ ok: false, reason: 'too-large' });
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
