/**
 * Compression of answers: `br`, `zstd` (where Node's zlib has it) and `gzip`, negotiated from
 * `Accept-Encoding` with its q-values (RFC 9110 12.5.3).
 *
 * - Bodies of MIN_COMPRESSED_BYTES or more are compressed; smaller ones gain too little for the
 *   CPU. The representation a client gets still depends on its `Accept-Encoding`, so every
 *   compressible answer says `Vary: Accept-Encoding`, and its ETag names the negotiated coding
 *   (`"<etag>-br"`): two codings never share a strong validator, and a conditional request
 *   matches only the ETag of the coding it would get. The coding in the ETag depends on the
 *   request alone (not on the body's size), so a 304 can be decided before any body is built.
 * - Compressed bodies of answers with an ETag are kept in a bounded LRU (by bytes) under their
 *   content type, ETag and coding: a hot answer is compressed once, not on every request.
 * - Server-sent events never come through here: they are written as they happen, unbuffered.
 *
 * Brotli runs at quality 5 rather than its default 11: 11 costs tens of times the CPU for a few
 * per cent of bytes, which a service compressing on the fly cannot afford.
 */
import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import { LRUCache } from 'lru-cache';

export type Coding = 'br' | 'zstd' | 'gzip';

/** Answers below this many bytes are sent as they are. */
export const MIN_COMPRESSED_BYTES = 1024;

/** Bytes of compressed bodies kept per process. */
const COMPRESSED_CACHE_BYTES = 16 * 1024 * 1024;

const zstdCompress: ((body: Buffer) => Buffer) | undefined =
  typeof zlib.zstdCompressSync === 'function' ? (body) => zlib.zstdCompressSync(body) : undefined;

/** The codings this process can produce, most preferred first (ties in q-value go to the first). */
export const AVAILABLE_CODINGS: readonly Coding[] =
  zstdCompress === undefined ? ['br', 'gzip'] : ['br', 'zstd', 'gzip'];

const encoders: Record<Coding, (body: Buffer) => Buffer> = {
  br: (body) =>
    zlib.brotliCompressSync(body, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      },
    }),
  gzip: (body) => zlib.gzipSync(body),
  zstd: (body) => {
    if (zstdCompress === undefined) throw new Error('zstd was negotiated but this Node has no zstd');
    return zstdCompress(body);
  },
};

/** Media types worth compressing: text and JSON (not images other than SVG). */
export function isCompressible(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return type.startsWith('text/') || type.endsWith('+json') || type === 'application/json' || type === 'image/svg+xml';
}

const negotiated = new Map<string, Coding | undefined>();
const MAX_REMEMBERED_HEADERS = 256;

/**
 * The coding to send for an `Accept-Encoding` value: the available coding with the highest
 * q-value above 0 (`*` stands for codings not named), undefined for identity. Clients send few
 * distinct values, so answers are remembered (a bounded number of them).
 */
export function negotiateCoding(header: string | undefined): Coding | undefined {
  if (header === undefined || header === '') return undefined;
  if (negotiated.has(header)) return negotiated.get(header);
  const coding = parseAndChoose(header);
  if (negotiated.size >= MAX_REMEMBERED_HEADERS) negotiated.clear();
  negotiated.set(header, coding);
  return coding;
}

function parseAndChoose(header: string): Coding | undefined {
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [token = '', ...parameters] = part.split(';').map((piece) => piece.trim());
    if (token === '') continue;
    let q = 1;
    for (const parameter of parameters) {
      const match = /^q\s*=\s*([0-9.]+)$/i.exec(parameter);
      if (match !== null) q = Number(match[1]);
    }
    if (Number.isNaN(q) || q < 0 || q > 1) q = 0;
    weights.set(token.toLowerCase(), q);
  }
  const wildcard = weights.get('*');
  let best: Coding | undefined;
  let bestQ = 0;
  for (const coding of AVAILABLE_CODINGS) {
    // `x-gzip` is gzip (RFC 9110 18.6).
    const q = weights.get(coding) ?? (coding === 'gzip' ? weights.get('x-gzip') : undefined) ?? wildcard ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  return best;
}

/** The coding a request negotiates. */
export const codingOf = (req: IncomingMessage): Coding | undefined => negotiateCoding(req.headers['accept-encoding']);

/** The ETag of the representation in `coding`: the identity ETag, or it with the coding appended. */
export function etagFor(etag: string, coding: Coding | undefined): string {
  if (coding === undefined) return etag;
  const weak = etag.startsWith('W/') ? 'W/' : '';
  const opaque = etag.slice(weak.length);
  return `${weak}${opaque.slice(0, -1)}-${coding}"`;
}

/** `Vary` with Accept-Encoding added to what the answer already varies by. */
export function varyWithEncoding(vary: OutgoingHttpHeader | undefined): string {
  const given = vary === undefined ? '' : Array.isArray(vary) ? vary.join(', ') : String(vary);
  if (given === '') return 'Accept-Encoding';
  if (/(^|,)\s*accept-encoding\s*(,|$)/i.test(given)) return given;
  return `${given}, Accept-Encoding`;
}

const compressedBodies = new LRUCache<string, Buffer>({
  maxSize: COMPRESSED_CACHE_BYTES,
  sizeCalculation: (body, key) => body.length + key.length,
});

/**
 * The body to send in `coding` and its `Content-Encoding` (undefined: as it is). `cacheKey`
 * names the body's content (its type and identity ETag): its compressed bytes are kept.
 */
export function encodeBody(
  body: Buffer | string,
  coding: Coding | undefined,
  cacheKey?: string,
): { body: Buffer | string; encoding: Coding | undefined } {
  if (coding === undefined || Buffer.byteLength(body) < MIN_COMPRESSED_BYTES) return { body, encoding: undefined };
  const key = cacheKey === undefined ? undefined : `${cacheKey}\n${coding}`;
  const kept = key === undefined ? undefined : compressedBodies.get(key);
  if (kept !== undefined) return { body: kept, encoding: coding };
  const encoded = encoders[coding](typeof body === 'string' ? Buffer.from(body) : body);
  if (key !== undefined) compressedBodies.set(key, encoded);
  return { body: encoded, encoding: coding };
}

/**
 * Sends a 200 of a compressible type in the request's coding (compressed when large enough),
 * with `Vary: Accept-Encoding`. `identityEtag` set: the answer's ETag is that of the coding, and
 * the compressed bytes are kept. HEAD gets the headers GET would get.
 */
export function sendEncoded(
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | string,
  headers: OutgoingHttpHeaders,
  identityEtag?: string,
): void {
  const coding = codingOf(req);
  // Header names come in any case (Yoga's are lower case): one of each is kept.
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  const cacheKey = identityEtag === undefined ? undefined : `${String(out['content-type'])}\n${identityEtag}`;
  const encoded = encodeBody(body, coding, cacheKey);
  out.vary = varyWithEncoding(out.vary);
  if (identityEtag !== undefined) out.etag = etagFor(identityEtag, coding);
  if (encoded.encoding !== undefined) out['content-encoding'] = encoded.encoding;
  out['content-length'] = Buffer.byteLength(encoded.body);
  res.writeHead(200, out);
  res.end(req.method === 'HEAD' ? undefined : encoded.body);
}
