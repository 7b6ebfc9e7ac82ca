/**
 * An upper bound on request bodies, so no client can make the server buffer and parse megabytes,
 * and the body's encoding (src/http/body-coding.ts). Only `/graphql` POST has a body in this
 * service. Yoga's own limit is off (../yoga.ts says why), so this Yoga plugin answers 413 before Yoga reads the
 * body: at once when `Content-Length` is too large, and while reading when a chunked body (no
 * `Content-Length`) grows past the limit. A compressed body (`Content-Encoding`) is read within
 * the limit, decompressed within it again, and handed to Yoga decoded; other codings, and a
 * `charset` other than UTF-8, are answered 415. The service's HTTP layer hands such bodies to
 * Yoga (./over-http.ts), so both paths answer them alike.
 */
import type { Plugin } from 'graphql-yoga';
import { decodeBody, isEncoded, unsupportedCharset, unsupportedCoding } from '../../http/body-coding.js';
import { requestBodyTooLargeMessage } from '../../http/request-body.js';
import { JSON_CONTENT_TYPE } from '../../http/respond.js';

/**
 * The bound is about twice the largest legitimate document as a JSON body (15 aliased `profiles`
 * fields of 100 names each, see ../execution/graphql-armor.ts; its size in docs/decisions.md,
 * "GraphQL document limits: about twice the heaviest legitimate document").
 */
export const MAX_REQUEST_BODY_BYTES = 64 * 1024;

export function requestBodyLimitPlugin(limitBytes: number = MAX_REQUEST_BODY_BYTES): Plugin {
  const tooLargeMessage = requestBodyTooLargeMessage(limitBytes);
  return {
    async onRequest({ request, setRequest, endResponse, fetchAPI }) {
      if (request.body === null) return;
      const refuse = (status: number, message: string) =>
        endResponse(
          new fetchAPI.Response(JSON.stringify({ error: message }), {
            status,
            // The rest of the body stays unread: the connection cannot carry another request.
            headers: { 'Content-Type': JSON_CONTENT_TYPE, Connection: 'close' },
          }),
        );
      const unsupported = unsupportedCharset(request.headers.get('content-type')) ?? unsupportedCoding(coding(request));
      if (unsupported !== undefined) {
        refuse(unsupported.status, unsupported.message);
        return;
      }

      const declared = request.headers.get('content-length');
      // Node's HTTP parser delivers exactly Content-Length bytes, so the header can be trusted.
      if (declared !== null && Number(declared) > limitBytes) {
        refuse(413, tooLargeMessage);
        return;
      }
      if (declared !== null && !isEncoded(coding(request))) return;

      const read = await readAtMost(request.body, limitBytes);
      if (read === undefined) {
        refuse(413, tooLargeMessage);
        return;
      }
      const decoded = await decodeBody(Buffer.from(read), coding(request), limitBytes, tooLargeMessage);
      if (!decoded.ok) {
        refuse(decoded.status, decoded.message);
        return;
      }
      const headers = new fetchAPI.Headers(request.headers);
      headers.delete('transfer-encoding');
      headers.delete('content-encoding');
      headers.set('content-length', String(decoded.body.byteLength));
      setRequest(
        new fetchAPI.Request(request.url, { method: request.method, headers, body: new Uint8Array(decoded.body) }),
      );
    },
  };
}

const coding = (request: Request) => request.headers.get('content-encoding') ?? undefined;

/** The whole stream, or undefined (and the stream cancelled) once it exceeds `limitBytes`. */
async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  limitBytes: number,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
