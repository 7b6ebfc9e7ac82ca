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
import type { Router } from '../../http/router.js';
import {
  escapeHtml,
  jsonForScriptElement,
  makeAsset,
  registerAssetRoutes,
  type StaticAsset,
} from '../../http/static-assets.js';
import type { Logger } from '../../logging/logger.js';
import type { GraphiQLPageOptions } from './graphiql-options.js';

/** Where the assets are served; the page names them relative to `/graphql`, so they resolve here. */
const GRAPHIQL_ASSETS_PATH = '/graphiql/';
const RELATIVE_ASSETS_PATH = GRAPHIQL_ASSETS_PATH.slice(1);

interface GraphiQLAssets {
  byFile: Map<string, StaticAsset>;
  stylesheet: StaticAsset;
  favicon: StaticAsset;
  /** Sets up Monaco's workers and renders GraphiQL once the bundle has run. */
  start: StaticAsset;
  bundle: StaticAsset;
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

/** The package ships the favicon as a `data:image/x-icon;base64,…` URL. */
function faviconAsset(dataUrl: string): StaticAsset {
  const match = /^data:image\/x-icon;base64,(.+)$/s.exec(dataUrl);
  if (match === null) throw new Error(`unexpected GraphiQL favicon: ${dataUrl.slice(0, 40)}…`);
  return makeAsset('favicon', 'ico', Buffer.from(match[1] ?? '', 'base64'));
}

function assetUrl(asset: StaticAsset): string {
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
export async function renderGraphiQL(options: GraphiQLPageOptions): Promise<string> {
  const assets = await graphiqlAssets();
  const title = escapeHtml(options.pageTitle ?? options.title ?? 'Yoga GraphiQL');
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

/** Answers `GET`/`HEAD` `/graphiql/<file>` with the asset of that name, or 404. */
export function registerGraphiQLAssetRoutes(router: Router, logger: Logger): void {
  registerAssetRoutes(router, logger, GRAPHIQL_ASSETS_PATH, async () => (await graphiqlAssets()).byFile, 'GraphiQL');
}
