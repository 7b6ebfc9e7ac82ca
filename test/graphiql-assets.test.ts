/**
 * GraphiQL's page and assets over HTTP: a small page without inline script, and the package's
 * stylesheet, bundle, workers and favicon as content-hashed, immutable, gzip-able responses that
 * a browser fetches once. (test/graphiql-browser.test.ts shows them working in Chromium.)
 */
import { css, editorWorkerService, graphqlWorker, js, jsonWorker } from '@graphql-yoga/render-graphiql/graphiql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/database.js';
import { renderGraphiQL } from '../src/graphql/graphiql/graphiql.js';
import { GRAPHIQL_EXAMPLE_QUERY } from '../src/graphql/graphiql/graphiql-example.js';
import { acceptsGzip } from '../src/http/static-assets.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

describe('GraphiQL page and assets', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let page: string;
  /** Asset URL (absolute) by the path the page or the start script names. */
  let assets: Map<string, string>;

  const get = (url: string, headers: Record<string, string> = {}) =>
    fetch(url, { headers: { 'accept-encoding': 'identity', ...headers } });

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    server = await startTestServer(handle);
    const response = await get(`${server.url}/graphql`, { accept: 'text/html' });
    expect(response.status).toBe(200);
    page = await response.text();
    const pageUrl = `${server.url}/graphql`;
    const named = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
    const start = named.find((name) => /start\.[0-9a-f]+\.js$/.test(name));
    expect(start).toBeDefined();
    const startScript = await (await get(new URL(start ?? '', pageUrl).href)).text();
    const workers = Object.values(JSON.parse(/var workers = (\{.*\});/.exec(startScript)?.[1] ?? '{}') as object);
    assets = new Map([...named, ...workers].map((name: string) => [name, new URL(name, pageUrl).href]));
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('is a small page whose only scripts are files of this server, with the example as data', () => {
    // The five example tabs travel in the page as data (the subscription tab took it past 4 KiB).
    expect(Buffer.byteLength(page)).toBeLessThan(5120);
    const scripts = [...page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    const executable = scripts.filter(([, attributes]) => !attributes?.includes('type="application/json"'));
    expect(executable.map(([, attributes, body]) => [/src="graphiql\//.test(attributes ?? ''), body])).toEqual([
      [true, ''],
      [true, ''],
    ]);
    expect(page).toContain(JSON.stringify(GRAPHIQL_EXAMPLE_QUERY));
    expect([...assets.values()].every((url) => url.startsWith(`${server.url}/graphiql/`))).toBe(true);
  });

  it("serves the package's stylesheet, bundle and workers byte for byte, immutable, with an ETag", async () => {
    const script = 'text/javascript; charset=utf-8';
    const expected = [
      { prefix: 'graphiql.', body: js, type: script },
      { prefix: 'graphiql.', body: css, type: 'text/css; charset=utf-8' },
      { prefix: 'editor.worker.', body: editorWorkerService, type: script },
      { prefix: 'json.worker.', body: jsonWorker, type: script },
      { prefix: 'graphql.worker.', body: graphqlWorker, type: script },
    ];
    const served: { url: string; type: string | null; text: string }[] = [];
    for (const url of assets.values()) {
      const response = await get(url);
      expect(response.status, url).toBe(200);
      expect(response.headers.get('cache-control'), url).toBe(IMMUTABLE);
      expect(response.headers.get('etag'), url).toMatch(/^"[0-9a-f]{16}"$/);
      expect(response.headers.get('x-content-type-options'), url).toBe('nosniff');
      served.push({ url, type: response.headers.get('content-type'), text: await response.text() });
    }
    for (const { prefix, body, type } of expected) {
      const match = served.find((asset) => asset.url.includes(`/graphiql/${prefix}`) && asset.text === body);
      expect(match?.type, prefix).toBe(type);
    }
    const favicon = [...assets.values()].find((url) => url.endsWith('.ico')) ?? '';
    expect((await get(favicon)).headers.get('content-type')).toBe('image/x-icon');
  });

  it('gzips on request, the same bytes once decoded, and varies on Accept-Encoding', async () => {
    const bundle = [...assets.values()].find((url) => /\/graphiql\.[0-9a-f]+\.js$/.test(url)) ?? '';
    const zipped = await get(bundle, { 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('vary')).toBe('Accept-Encoding');
    expect(Number(zipped.headers.get('content-length'))).toBeLessThan(Buffer.byteLength(js) * 0.4);
    expect(zipped.headers.get('etag')).toMatch(/^"[0-9a-f]{16}-gzip"$/);
    // fetch decodes the gzip body.
    expect(await zipped.text()).toBe(js);
    for (const refused of ['identity', 'gzip;q=0, br']) {
      const plain = await get(bundle, { 'accept-encoding': refused });
      expect(plain.headers.get('content-encoding'), refused).toBeNull();
      expect(Number(plain.headers.get('content-length')), refused).toBe(Buffer.byteLength(js));
      await plain.arrayBuffer();
    }
  });

  it('answers 304 to a matching If-None-Match, and HEAD without a body', async () => {
    const stylesheet = [...assets.values()].find((url) => url.endsWith('.css')) ?? '';
    const first = await get(stylesheet);
    await first.arrayBuffer();
    const etag = first.headers.get('etag') ?? '';
    const again = await get(stylesheet, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe(IMMUTABLE);

    const head = await fetch(stylesheet, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(css));
    expect(await head.text()).toBe('');
  });

  it('answers 404 for an unknown file or another content hash', async () => {
    const bundle = [...assets.values()].find((url) => /\/graphiql\.[0-9a-f]+\.js$/.test(url)) ?? '';
    for (const url of [bundle.replace(/\.[0-9a-f]{16}\.js$/, '.0000000000000000.js'), `${server.url}/graphiql/x.js`]) {
      const response = await get(url);
      expect(response.status, url).toBe(404);
      expect(await response.json()).toEqual({ error: 'Not found' });
    }
  });
});

describe('renderGraphiQL', () => {
  it('keeps options from closing the data <script> and the title from becoming markup', async () => {
    const html = await renderGraphiQL({ title: '<b>t</b>', defaultQuery: '# </script><script>alert(1)</script>' });
    expect(html).toContain('<title>&#60;b&#62;t&#60;/b&#62;</title>');
    expect(html.match(/<script/g)).toHaveLength(3);
    const data = /<script type="application\/json" id="graphiql-options">(.*)<\/script>/.exec(html)?.[1] ?? '';
    expect(JSON.parse(data)).toEqual({ title: '<b>t</b>', defaultQuery: '# </script><script>alert(1)</script>' });
  });
});

describe('acceptsGzip', () => {
  it.each([
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['br;q=1.0, gzip;q=0.8, *;q=0.1', true],
    ['*', true],
    ['GZIP', true],
    ['identity', false],
    ['gzip;q=0', false],
    ['gzip;q=0, *;q=1', false],
    ['br', false],
    ['', false],
  ])('%j → %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });

  it('is false without the header', () => {
    expect(acceptsGzip(undefined)).toBe(false);
  });
});
