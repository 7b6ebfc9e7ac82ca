/**
 * GraphiQL served by the service itself, so that it works offline and behind a firewall. Yoga's
 * own page loads its stylesheet, script, Monaco workers and favicon from public CDNs (and the
 * build it pins ignores `defaultQuery`); this one is a small page whose assets come from the npm
 * package `@graphql-yoga/render-graphiql` and are answered here as separate responses under
 * content-hashed URLs, so a browser fetches these megabytes once and keeps them. The page has no
 * inline script, which leaves room for a Content-Security-Policy of `script-src 'self'`.
 *
 * The assets are loaded on first use: importing the package costs memory and start-up time that
 * a process that never serves GraphiQL should not pay (the figures: docs/decisions.md, "GraphiQL
 * from the process, its assets loaded on first use").
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { GraphiQLOptions } from 'graphql-yoga';
import { matchesIfNoneMatch } from '../../http/conditional.js';
import { sendError } from '../../http/respond.js';
import type { Router } from '../../http/router.js';
import type { Logger } from '../../logging/logger.js';

/** Where the assets are served; the page names them relative to `/graphql`, so they resolve here. */
const GRAPHIQL_ASSETS_PATH = '/graphiql/';
const RELATIVE_ASSETS_PATH = GRAPHIQL_ASSETS_PATH.slice(1);

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** gzip is kept only when it saves at least this share of the bytes (JS and CSS save far more). */
const MIN_GZIP_SAVING = 0.1;

const gzipAsync = promisify(gzip);

interface Asset {
  /** The name under GRAPHIQL_ASSETS_PATH: base name, content hash, extension. */
  file: string;
  contentType: string;
  body: Buffer;
  /** Strong validator of the identity body; the gzipped body has its own (RFC 9110, 8.8.3). */
  etag: string;
  gzipEtag: string;
  /** Made on the first request for the asset; undefined when gzip does not pay. */
  gzipped?: Promise<Buffer | undefined>;
}

interface GraphiQLAssets {
  byFile: Map<string, Asset>;
  stylesheet: Asset;
  favicon: Asset;
  /** Sets up Monaco's workers and renders GraphiQL once the bundle has run. */
  start: Asset;
  bundle: Asset;
}

let loading: Promise<GraphiQLAssets> | undefined;

function graphiqlAssets(): Promise<GraphiQLAssets> {
  loading ??= loadAssets().catch((error: unknown) => {
    // A failed import (a broken install) is retried on the next request rather than remembered.
    loading = undefined;
    throw new Error('cannot load the GraphiQL assets of @graphql-yoga/render-graphiql', { cause: error });
  });
  return loading;
}

async function loadAssets(): Promise<GraphiQLAssets> {
  const build = await import('@graphql-yoga/render-graphiql/graphiql');
  // Monaco asks for a worker by label; these are the labels Yoga's own page answers.
  const workers = {
    editorWorkerService: makeAsset('editor.worker', 'js', build.editorWorkerService),
    json: makeAsset('json.worker', 'js', build.jsonWorker),
    graphql: makeAsset('graphql.worker', 'js', build.graphqlWorker),
  };
  const workerUrls = Object.fromEntries(Object.entries(workers).map(([label, asset]) => [label, assetUrl(asset)]));
  const assets = {
    stylesheet: makeAsset('graphiql', 'css', build.css),
    favicon: faviconAsset(build.favicon),
    start: makeAsset('start', 'js', startScript(workerUrls)),
    bundle: makeAsset('graphiql', 'js', build.js),
  };
  const all = [...Object.values(workers), ...Object.values(assets)];
  return { ...assets, byFile: new Map(all.map((asset) => [asset.file, asset])) };
}

const CONTENT_TYPES = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  ico: 'image/x-icon',
} as const;

function makeAsset(name: string, extension: keyof typeof CONTENT_TYPES, content: string | Buffer): Asset {
  const body = typeof content === 'string' ? Buffer.from(content) : content;
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return {
    file: `${name}.${hash}.${extension}`,
    contentType: CONTENT_TYPES[extension],
    body,
    etag: `"${hash}"`,
    gzipEtag: `"${hash}-gzip"`,
  };
}

/** The package ships the favicon as a `data:image/x-icon;base64,…` URL. */
function faviconAsset(dataUrl: string): Asset {
  const match = /^data:image\/x-icon;base64,(.+)$/s.exec(dataUrl);
  if (match === null) throw new Error(`unexpected GraphiQL favicon: ${dataUrl.slice(0, 40)}…`);
  return makeAsset('favicon', 'ico', Buffer.from(match[1] ?? '', 'base64'));
}

function assetUrl(asset: Asset): string {
  return `${RELATIVE_ASSETS_PATH}${asset.file}`;
}

/**
 * Runs before the bundle (both deferred, so in order) and renders once the document is parsed,
 * after the bundle has defined `YogaGraphiQL`. Worker URLs are same-origin, so Monaco starts its
 * workers from them directly (no blob: URLs).
 */
function startScript(workerUrls: Record<string, string>): string {
  return `'use strict';
(function () {
  var workers = ${JSON.stringify(workerUrls)};
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) {
      return workers[label] || workers.editorWorkerService;
    },
  };
  document.addEventListener('DOMContentLoaded', function () {
    var root = document.getElementById('root');
    if (typeof YogaGraphiQL === 'undefined') {
      root.textContent = 'GraphiQL did not load: its script could not be fetched from this server.';
      return;
    }
    var options = JSON.parse(document.getElementById('graphiql-options').textContent);
    YogaGraphiQL.renderYogaGraphiQL(root, options);
  });
})();
`;
}

/**
 * Yoga's `renderGraphiQL` option: the page `/graphql` shows a browser. `options` (Yoga's
 * `graphiql` option, see graphiql-options.ts) reach the bundle unchanged, as with Yoga's own
 * page.
 */
export async function renderGraphiQL(options: GraphiQLOptions): Promise<string> {
  const assets = await graphiqlAssets();
  const title = escapeHtml(options.title ?? 'Yoga GraphiQL');
  const favicon = escapeHtml(options.favicon ?? assetUrl(assets.favicon));
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>${title}</title>
    <link rel="icon" href="${favicon}">
    <link rel="stylesheet" href="${assetUrl(assets.stylesheet)}">
    <script defer src="${assetUrl(assets.start)}"></script>
    <script defer src="${assetUrl(assets.bundle)}"></script>
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root">Loading ${title}…</div>
    <script type="application/json" id="graphiql-options">${jsonForScriptElement(options)}</script>
  </body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** JSON that cannot end its <script> element early: `<` (of `</script` or `<!--`) is escaped. */
function jsonForScriptElement(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/** Answers `GET`/`HEAD` `/graphiql/<file>` with the asset of that name, or 404. */
export function registerGraphiQLAssetRoutes(router: Router, logger: Logger): void {
  router.on(['GET', 'HEAD'], `${GRAPHIQL_ASSETS_PATH}:file`, (req, res, params) => {
    serveAsset(req, res, params.file ?? '').catch((error: unknown) => {
      logger.error({ err: error, url: req.url }, 'GraphiQL asset failed');
      if (!res.headersSent) sendError(req, res, 500, 'GraphiQL assets are unavailable');
      else res.destroy();
    });
  });
}

async function serveAsset(req: IncomingMessage, res: ServerResponse, file: string): Promise<void> {
  const asset = (await graphiqlAssets()).byFile.get(file);
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

function gzippedBody(asset: Asset): Promise<Buffer | undefined> {
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
