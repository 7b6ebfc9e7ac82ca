/**
 * Browser pages' scripts and stylesheets from npm packages (GraphiQL, the REST reference),
 * answered by the service itself under content-hashed names: a name changes with the content, so
 * each answer may be cached for a year as immutable and a browser fetches these megabytes once.
 * Each has a strong ETag of its own body and of its gzipped body (RFC 9110, 8.8.3).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Logger } from '../logging/logger.js';
import { matchesIfNoneMatch } from './conditional.js';
import { sendError } from './respond.js';
import type { Router } from './router.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** gzip is kept only when it saves at least this share of the bytes (JS and CSS save far more). */
const MIN_GZIP_SAVING = 0.1;

const gzipAsync = promisify(gzip);

export interface StaticAsset {
  /** The name under the assets' path: base name, content hash, extension. */
  readonly file: string;
  readonly contentType: string;
  readonly body: Buffer;
  /** Strong validator of the identity body; the gzipped body has its own. */
  readonly etag: string;
  readonly gzipEtag: string;
  /** Made on the first request for the asset; undefined when gzip does not pay. */
  gzipped?: Promise<Buffer | undefined>;
}

const CONTENT_TYPES = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  ico: 'image/x-icon',
  svg: 'image/svg+xml',
} as const;

export type AssetExtension = keyof typeof CONTENT_TYPES;

function contentHash(body: string | Buffer): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}

/** A strong ETag of `body`: it changes whenever the body does. */
export function contentEtag(body: string | Buffer): string {
  return `"${contentHash(body)}"`;
}

export function makeAsset(name: string, extension: AssetExtension, content: string | Buffer): StaticAsset {
  const body = typeof content === 'string' ? Buffer.from(content) : content;
  const hash = contentHash(body);
  return {
    file: `${name}.${hash}.${extension}`,
    contentType: CONTENT_TYPES[extension],
    body,
    etag: `"${hash}"`,
    gzipEtag: `"${hash}-gzip"`,
  };
}

/**
 * Answers `GET`/`HEAD` `<path>:file` with the asset of that name from `lookup` (which may load
 * the assets on first use), or 404. `what` names the assets in the log and the 500.
 */
export function registerAssetRoutes(
  router: Router,
  logger: Logger,
  path: string,
  lookup: () => Promise<ReadonlyMap<string, StaticAsset>>,
  what: string,
): void {
  router.on(['GET', 'HEAD'], `${path}:file`, (req, res, params) => {
    lookup()
      .then((assets) => serveAsset(req, res, assets.get(params.file ?? '')))
      .catch((error: unknown) => {
        logger.error({ err: error, url: req.url }, `${what} asset failed`);
        if (!res.headersSent) sendError(req, res, 500, `${what} assets are unavailable`);
        else res.destroy();
      });
  });
}

async function serveAsset(req: IncomingMessage, res: ServerResponse, asset: StaticAsset | undefined): Promise<void> {
  if (asset === undefined) {
    sendError(req, res, 404, 'Not found');
    return;
  }
  const compressed = await gzippedBody(asset);
  const gzipped = acceptsGzip(req.headers['accept-encoding']) ? compressed : undefined;
  const headers: OutgoingHttpHeaders = {
    'Content-Type': asset.contentType,
    'Cache-Control': IMMUTABLE,
    ETag: gzipped === undefined ? asset.etag : asset.gzipEtag,
    'X-Content-Type-Options': 'nosniff',
  };
  if (compressed !== undefined) headers.Vary = 'Accept-Encoding';
  if (matchesIfNoneMatch(req, asset.etag) || matchesIfNoneMatch(req, asset.gzipEtag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  if (gzipped !== undefined) headers['Content-Encoding'] = 'gzip';
  const body = gzipped ?? asset.body;
  headers['Content-Length'] = body.length;
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

function gzippedBody(asset: StaticAsset): Promise<Buffer | undefined> {
  asset.gzipped ??= gzipAsync(asset.body).then((compressed) =>
    compressed.length <= asset.body.length * (1 - MIN_GZIP_SAVING) ? compressed : undefined,
  );
  return asset.gzipped;
}

/** True when `Accept-Encoding` admits gzip: listed (or `*`) with a non-zero q. */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  const weights = new Map<string, number>();
  for (const entry of header.split(',')) {
    const [coding = '', ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    weights.set(coding, q === undefined ? 1 : Number(q.slice(2)));
  }
  const weight = weights.get('gzip') ?? weights.get('x-gzip') ?? weights.get('*') ?? 0;
  return weight > 0;
}

/** `text` safe inside HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** JSON that cannot end its <script> element early: `<` (of `</script` or `<!--`) is escaped. */
export function jsonForScriptElement(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}
