/**
 * `GET /api/docs`: the REST API's interactive reference, drawn from `/api/openapi.json` by Scalar
 * API Reference (the npm package's standalone bundle; why Scalar: docs/decisions.md, "The REST
 * reference page: Scalar, served from the process"). Like GraphiQL (src/graphql/graphiql), it is
 * served by the service itself: the bundle and the page's own stylesheet and start script are
 * content-hashed, immutable assets under `/api/docs/`, and the page names nothing of another host,
 * so it works offline and under the Content-Security-Policy below. Scalar's requests to its own
 * services (fonts, the request proxy, telemetry, the AI agent, MCP) are turned off in its
 * configuration; "try it" requests go straight to the origin the page came from.
 *
 * The bundle is loaded on first use, as GraphiQL's is: a process that never serves the page does
 * not pay for reading it.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { matchesIfNoneMatch } from '../http/conditional.js';
import { sendError } from '../http/respond.js';
import type { Router } from '../http/router.js';
import {
  contentEtag,
  escapeHtml,
  jsonForScriptElement,
  makeAsset,
  registerAssetRoutes,
  type StaticAsset,
} from '../http/static-assets.js';
import type { Logger } from '../logging/logger.js';

const API_REFERENCE_PATH = '/api/docs';
/** The page names its assets relative to `/api/docs`, so they resolve under this path. */
const ASSETS_PATH = `${API_REFERENCE_PATH}/`;
const RELATIVE_ASSETS_PATH = 'docs/';

/**
 * Only this origin, for everything. Scalar injects its stylesheet as `<style>` elements (and
 * sets `style` attributes), so styles are also allowed inline: styles cannot run script, and
 * with every other source limited to 'self' they cannot send anything elsewhere either. Scripts
 * stay strict: no inline script, no eval.
 */
export const API_REFERENCE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ');

/** The page changes only with the bundle and this file, so it is revalidated rather than refetched. */
const PAGE_CACHE_CONTROL = 'no-cache';

/**
 * Scalar's configuration (https://scalar.com, "Configuration"): the document by its path and
 * every call home turned off. `servers` and the absolute URL are set by the start script from the
 * page's own origin, which is where "try it" must go even when PUBLIC_URL names another.
 */
const SCALAR_CONFIGURATION = {
  url: 'openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  showToolbar: 'never',
  documentDownloadType: 'json',
  // Its "Open API Client" buttons send the reader to Scalar's hosted client; "Test Request" on
  // each operation opens the same client inside this page.
  hideClientButton: true,
  defaultOpenAllTags: true,
  persistAuth: false,
  theme: 'default',
} as const;

interface ReferenceAssets {
  byFile: Map<string, StaticAsset>;
  page: { body: string; etag: string };
}

let loading: Promise<ReferenceAssets> | undefined;

function referenceAssets(): Promise<ReferenceAssets> {
  loading ??= loadAssets().catch((error: unknown) => {
    // A failed read (a broken install) is retried on the next request rather than remembered.
    loading = undefined;
    throw new Error('cannot load the REST reference assets of @scalar/api-reference', { cause: error });
  });
  return loading;
}

/** The package exports no path to its browser bundle; it sits beside its main module. */
function standaloneBundleUrl(): URL {
  return new URL('./browser/standalone.js', import.meta.resolve('@scalar/api-reference'));
}

async function loadAssets(): Promise<ReferenceAssets> {
  const bundle = makeAsset('scalar', 'js', await readFile(standaloneBundleUrl()));
  const stylesheet = makeAsset('page', 'css', PAGE_STYLESHEET);
  const start = makeAsset('start', 'js', START_SCRIPT);
  const favicon = makeAsset('favicon', 'svg', FAVICON);
  const body = pageHtml({ bundle, stylesheet, start, favicon });
  const page = { body, etag: contentEtag(body) };
  return { byFile: new Map([bundle, stylesheet, start, favicon].map((asset) => [asset.file, asset])), page };
}

/** The bar above the reference: where the reader is, and the way to GraphiQL and the raw document. */
const PAGE_STYLESHEET = `:root { --scalar-custom-header-height: 2.5rem; }
body { margin: 0; }
.service-bar {
  position: sticky; top: 0; z-index: 1000; box-sizing: border-box;
  height: var(--scalar-custom-header-height);
  display: flex; align-items: center; gap: 1.25rem; padding: 0 1rem;
  font: 14px/1.2 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  background: #1b1f24; color: #f0f3f6;
}
.service-bar strong { font-weight: 600; }
.service-bar a { color: #9ecbff; text-decoration: none; }
.service-bar a:hover, .service-bar a:focus { text-decoration: underline; }
.service-bar .spacer { flex: 1; }
`;

/** A page of its own in the browser's tabs (and no request for a `/favicon.ico` that is not there). */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="6" fill="#1b1f24"/>
<text x="16" y="22" font-family="monospace" font-size="16" font-weight="bold" text-anchor="middle" fill="#9ecbff">{ }</text>
</svg>
`;

/**
 * Runs after the bundle (both deferred, so in order), once the document is parsed. The
 * configuration is JSON in the page, so the page needs no inline script.
 */
const START_SCRIPT = `'use strict';
document.addEventListener('DOMContentLoaded', function () {
  var root = document.getElementById('reference');
  if (typeof Scalar === 'undefined' || typeof Scalar.createApiReference !== 'function') {
    root.textContent = 'The reference did not load: its script could not be fetched from this server.';
    return;
  }
  var configuration = JSON.parse(document.getElementById('reference-configuration').textContent);
  configuration.url = new URL(configuration.url, document.baseURI).href;
  configuration.servers = [{ url: location.origin, description: 'This service' }];
  root.textContent = '';
  Scalar.createApiReference(root, configuration);
});
`;

function assetUrl(asset: StaticAsset): string {
  return `${RELATIVE_ASSETS_PATH}${asset.file}`;
}

interface PageAssets {
  bundle: StaticAsset;
  stylesheet: StaticAsset;
  start: StaticAsset;
  favicon: StaticAsset;
}

function pageHtml(assets: PageAssets): string {
  const title = 'Name profiles: REST API reference';
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="${assetUrl(assets.favicon)}">
    <link rel="stylesheet" href="${assetUrl(assets.stylesheet)}">
    <script defer src="${assetUrl(assets.bundle)}"></script>
    <script defer src="${assetUrl(assets.start)}"></script>
  </head>
  <body>
    <nav class="service-bar" aria-label="Service">
      <strong>Name profiles · REST API</strong>
      <a href="../graphql">GraphQL explorer (GraphiQL)</a>
      <a href="openapi.json">OpenAPI document</a>
    </nav>
    <noscript>The reference needs JavaScript; the OpenAPI document is at /api/openapi.json.</noscript>
    <div id="reference">Loading the REST API reference…</div>
    <script type="application/json" id="reference-configuration">${jsonForScriptElement(SCALAR_CONFIGURATION)}</script>
  </body>
</html>
`;
}

/** `GET`/`HEAD` `/api/docs`: the page (`/api/docs/` redirects to it); `/api/docs/<file>`: its assets. */
export function registerApiReferenceRoutes(router: Router, logger: Logger): void {
  router.on(['GET', 'HEAD'], API_REFERENCE_PATH, (req, res) => {
    referenceAssets()
      .then((assets) => sendPage(req, res, assets.page))
      .catch((error: unknown) => {
        logger.error({ err: error, url: req.url }, 'REST reference page failed');
        if (!res.headersSent) sendError(req, res, 500, 'The REST reference is unavailable');
        else res.destroy();
      });
  });
  // The page names its assets relative to `/api/docs`; from `/api/docs/` they would resolve one
  // folder too deep, so the address people type with a slash is sent to the page's own.
  router.on(['GET', 'HEAD'], ASSETS_PATH, (_req, res) => {
    res.writeHead(308, { Location: API_REFERENCE_PATH, 'Content-Length': 0 });
    res.end();
  });
  registerAssetRoutes(router, logger, ASSETS_PATH, async () => (await referenceAssets()).byFile, 'REST reference');
}

function sendPage(req: IncomingMessage, res: ServerResponse, page: ReferenceAssets['page']): void {
  const headers = {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': PAGE_CACHE_CONTROL,
    ETag: page.etag,
    'Content-Security-Policy': API_REFERENCE_CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
  if (matchesIfNoneMatch(req, page.etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const body = Buffer.from(page.body);
  res.writeHead(200, { ...headers, 'Content-Length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}
