/**
 * The REST reference page (`GET /api/docs`) over HTTP: a small page without inline script under a
 * Content-Security-Policy of 'self', revalidated by its ETag, whose assets (Scalar's bundle, the
 * page's stylesheet, start script and icon) are content-hashed, immutable and gzip-able. It is no
 * path of the OpenAPI document. (test/api-reference-browser.test.ts shows it working in Chromium.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { API_REFERENCE_CSP } from '../src/rest/api-reference.js';
import { type TestServer, useDemoServer } from './support/app-server.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

describe('the REST reference page', () => {
  const demo = useDemoServer();
  let server: TestServer;
  let page: Response;
  let html: string;
  /** The assets the page names, as absolute URLs. */
  let assets: string[];

  const get = (url: string, headers: Record<string, string> = {}) =>
    fetch(url, { headers: { 'accept-encoding': 'identity', ...headers } });

  beforeAll(async () => {
    server = demo.server;
    page = await get(`${server.url}/api/docs`);
    html = await page.text();
    const pageUrl = `${server.url}/api/docs`;
    assets = [...html.matchAll(/(?:src|href)="(docs\/[^"]+)"/g)].map((match) => new URL(match[1] ?? '', pageUrl).href);
  });

  it('is a page with no inline script, under a policy of this origin only', () => {
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(API_REFERENCE_CSP);
    expect(API_REFERENCE_CSP).toContain("default-src 'self'");
    expect(API_REFERENCE_CSP).not.toContain('unsafe-eval');
    expect(API_REFERENCE_CSP).not.toMatch(/script-src[^;]*unsafe-inline/);
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    const executable = scripts.filter(([, attributes]) => !attributes?.includes('type="application/json"'));
    expect(executable.map(([, attributes, body]) => [/src="docs\//.test(attributes ?? ''), body])).toEqual([
      [true, ''],
      [true, ''],
    ]);
    // Nothing of another host: every URL the page names is relative to this service.
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    expect(html).toContain('href="../graphql"');
    expect(html).toContain('href="openapi.json"');
  });

  it('is revalidated by its ETag', async () => {
    const etag = page.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const again = await get(`${server.url}/api/docs`, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.headers.get('content-security-policy')).toBe(API_REFERENCE_CSP);
  });

  it('serves its assets content-hashed and immutable, with ETags, gzipped when asked', async () => {
    expect(assets.map((url) => new URL(url).pathname.replace(/\.[0-9a-f]{16}\./, '.#.')).sort()).toEqual([
      '/api/docs/favicon.#.svg',
      '/api/docs/page.#.css',
      '/api/docs/scalar.#.js',
      '/api/docs/start.#.js',
    ]);
    for (const url of assets) {
      const response = await get(url);
      expect(response.status, url).toBe(200);
      expect(response.headers.get('cache-control'), url).toBe(IMMUTABLE);
      const etag = response.headers.get('etag') ?? '';
      expect(url).toContain(etag.slice(1, -1));
      expect((await get(url, { 'if-none-match': etag })).status, url).toBe(304);
    }
    const bundle = assets.find((url) => url.includes('/scalar.')) ?? '';
    const gzipped = await get(bundle, { 'accept-encoding': 'gzip' });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    expect((await gzipped.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect((await get(`${server.url}/api/docs/scalar.0000000000000000.js`)).status).toBe(404);
  });

  it('sends the address typed with a trailing slash to the page, where its relative asset links resolve', async () => {
    const response = await fetch(`${server.url}/api/docs/`, { redirect: 'manual' });
    expect(response.status).toBe(308);
    expect(response.headers.get('location')).toBe('/api/docs');
    const followed = await fetch(`${server.url}/api/docs/`);
    expect(followed.url).toBe(`${server.url}/api/docs`);
    expect(followed.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('is no path of the OpenAPI document', async () => {
    const document = (await (await get(`${server.url}/api/openapi.json`)).json()) as { paths: object };
    expect(Object.keys(document.paths).some((path) => path.startsWith('/api/docs'))).toBe(false);
  });
});
