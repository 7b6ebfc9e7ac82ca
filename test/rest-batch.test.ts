/**
 * Batch lookup over a real socket, on every test database: `GET /api/profiles?names=` and
 * `POST /api/profiles` answer the exact shapes and errors of the additions file, from one SQL
 * statement, at one point of the profile budget per distinct name.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer, useDemoServer } from './support/app-server.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { StatementLog } from './support/graphql-client.js';
import { corsPreflight, type RawClient, rawClient } from './support/raw-http.js';

const INVALID_NAME = 'Invalid name format, expected <local>@<domain>';

/** POSTs `body` in 1 KiB chunks without a Content-Length (chunked transfer coding); resolves to the status. */
function postChunked(baseUrl: string, body: string): Promise<number> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port: Number(port), path: '/api/profiles', method: 'POST' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.setHeader('content-type', 'application/json');
    // The server may answer and close before the whole body is sent.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' ? undefined : reject(error)));
    for (let at = 0; at < body.length; at += 1024) req.write(body.slice(at, at + 1024));
    req.end();
  });
}

describe.each(databaseKinds())('batch lookup on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let raw: RawClient;
  const statements = new StatementLog();

  const get = (query: string, init: RequestInit = {}) => fetch(`${server.url}/api/profiles${query}`, init);
  const post = (body: string, contentType = 'application/json') =>
    fetch(`${server.url}/api/profiles`, { method: 'POST', headers: { 'Content-Type': contentType }, body });
  const single = async (name: string) => (await fetch(`${server.url}/api/${encodeURIComponent(name)}`)).text();

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open({ logger: statements });
    await seedDemoData(handle.db);
    // No profile cache: every lookup reaches the loaders, so counted statements mean what they say.
    server = await startTestServer(handle, { PROFILE_LIMIT: '100000', PROFILE_CACHE_SIZE: '0' });
    raw = rawClient(server.url);
  });
  afterAll(async () => {
    raw?.close();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('answers each name with the exact /api/{name_id} document, keys canonical and in first-asked order', async () => {
    const response = await get(`?names=${encodeURIComponent('nobody@me,Demo@ME,zoë.müller@studio,DEMO@me,empty@me')}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await response.text();
    const expected =
      `{"profiles":{"nobody@me":null,"demo@me":${await single('demo@me')},` +
      `"zoë.müller@studio":${await single('zoë.müller@studio')},"empty@me":${await single('empty@me')}}}`;
    expect(text).toBe(expected);
  });

  it('answers POST {"names": [...]} with the same body, Cache-Control: no-store and no ETag', async () => {
    const names = ['nobody@me', 'Demo@ME', 'zoë.müller@studio'.normalize('NFD'), 'demo@me'];
    const byGet = await get(`?names=${names.map(encodeURIComponent).join(',')}`);
    const byPost = await post(JSON.stringify({ names }));
    expect(byPost.status).toBe(200);
    expect(byPost.headers.get('cache-control')).toBe('no-store');
    expect(byPost.headers.get('etag')).toBeNull();
    expect(await byPost.text()).toBe(await byGet.text());
    const withCharset = await post(JSON.stringify({ names, other: 'ignored' }), 'Application/JSON; charset=utf-8');
    expect(withCharset.status).toBe(200);
  });

  it('reads repeated names parameters as one list', async () => {
    const joined = await (await get('?names=demo@me,empty@me')).text();
    expect(await (await get('?names=demo@me&names=empty@me')).text()).toBe(joined);
  });

  it('costs one SQL statement for 100 names', async () => {
    const names = Array.from({ length: 97 }, (_, index) => `n${index}@me`).concat(['demo@me', 'empty@me', 'blank@me']);
    statements.reset();
    const response = await post(JSON.stringify({ names }));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { profiles: Record<string, unknown> };
    expect(Object.keys(body.profiles)).toEqual(names);
    expect(statements.ofRequests()).toHaveLength(1);
  });

  it('sends the profile Cache-Control and a strong ETag on GET, and 304 for a matching If-None-Match', async () => {
    const first = await get('?names=demo@me,nobody@me');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    const again = await get('?names=demo@me,nobody@me', { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe('public, max-age=60');
    expect(await again.text()).toBe('');
    // Another list, another order: another answer, another ETag.
    expect((await get('?names=nobody@me,demo@me')).headers.get('etag')).not.toBe(etag);
    expect((await get('?names=demo@me')).headers.get('etag')).not.toBe(etag);
  });

  it.each([
    ['no names parameter', ''],
    ['an empty names parameter', '?names='],
    ['empty names parameters', '?names=&names='],
  ])('GET answers 400 "required" for %s', async (_label, query) => {
    const response = await get(query);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'The names parameter is required' });
  });

  it.each([
    ['an empty array', '{"names": []}', 'The names parameter is required'],
    ['no names key', '{}', 'Invalid JSON body'],
    ['not JSON', '{"names": [', 'Invalid JSON body'],
    ['an empty body', '', 'Invalid JSON body'],
    ['an array body', '["demo@me"]', 'Invalid JSON body'],
    ['names as a string', '{"names": "demo@me"}', 'Invalid JSON body'],
    ['a name that is not a string', '{"names": ["demo@me", 7]}', 'Invalid JSON body'],
    ['null', 'null', 'Invalid JSON body'],
  ])('POST answers 400 for %s', async (_label, body, message) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: message });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('POST answers 400 for a body that is not UTF-8', async () => {
    const response = await fetch(`${server.url}/api/profiles`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x73, 0x22, 0x3a, 0x5b, 0x22, 0xff, 0x22, 0x5d, 0x7d]),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'Invalid JSON body' });
  });

  it('answers 400 naming the first invalid name as given, on GET and POST', async () => {
    const byGet = await get(`?names=demo@me,${encodeURIComponent(' Bad Name ')},also-bad`);
    expect(byGet.status).toBe(400);
    expect(await byGet.json()).toEqual({ error: INVALID_NAME, name: ' Bad Name ' });
    const byPost = await post(JSON.stringify({ names: ['demo@me', '', 'x'] }));
    expect(await byPost.json()).toEqual({ error: INVALID_NAME, name: '' });
    const trailingComma = await get('?names=demo@me,');
    expect(await trailingComma.json()).toEqual({ error: INVALID_NAME, name: '' });
  });

  it('answers 400 for more than 100 names, counted before equal names are merged', async () => {
    const names = Array.from({ length: 101 }, () => 'demo@me');
    for (const response of [await get(`?names=${names.join(',')}`), await post(JSON.stringify({ names }))]) {
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: 'At most 100 names per request' });
    }
  });

  it('answers 415 for another content type, or none', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx']) {
      const response = await post('{"names":["demo@me"]}', type);
      expect(response.status, type).toBe(415);
      expect(await response.json()).toEqual({ error: 'Expected application/json' });
    }
    const untyped = await raw.send('/api/profiles', { method: 'POST', body: '{"names":["demo@me"]}' });
    expect(untyped.status).toBe(415);
  });

  it('answers 413 over 64 KiB, declared or chunked, and keeps serving', async () => {
    const big = JSON.stringify({ names: ['demo@me'], pad: 'x'.repeat(64 * 1024) });
    const declared = await post(big);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({ error: 'Request body too large, the limit is 65536 bytes' });
    expect(await postChunked(server.url, big)).toBe(413);
    const justUnder = JSON.stringify({ names: ['demo@me'], pad: 'x'.repeat(64 * 1024 - 40) });
    expect(Buffer.byteLength(justUnder)).toBeLessThanOrEqual(64 * 1024);
    expect((await post(justUnder)).status).toBe(200);
  });

  it('answers HEAD like GET without a body, and 405 with Allow for other methods', async () => {
    const head = await get('?names=demo@me', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toMatch(/^"/);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(100);
    expect(await head.text()).toBe('');
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const response = await get('?names=demo@me', { method });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('GET, HEAD, POST');
      expect(await response.json()).toEqual({ error: 'Method not allowed' });
    }
  });

  it('answers a CORS preflight for a JSON POST', async () => {
    const response = await corsPreflight(`${server.url}/api/profiles`, 'POST', 'content-type');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST');
    expect(response.headers.get('access-control-allow-headers')).toContain('Content-Type');
  });
});

describe('batch lookup budget', () => {
  const demo = useDemoServer({ PROFILE_LIMIT: '10' });

  it('takes one point per distinct name, and 429 with Retry-After when the names do not fit', async () => {
    const get = (names: string) => fetch(`${demo.server.url}/api/profiles?names=${names}`);
    const first = await get('demo@me,DEMO@me,nobody@me,empty@me');
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('10');
    expect(first.headers.get('ratelimit-remaining')).toBe('7');
    const post = await fetch(`${demo.server.url}/api/profiles`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ names: ['a@me', 'b@me', 'c@me', 'd@me', 'e@me'] }),
    });
    expect(post.headers.get('ratelimit-remaining')).toBe('2');
    const over = await get('a@me,b@me,c@me');
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    expect(((await over.json()) as { error: string }).error).toMatch(/^Too many requests, retry in \d+ seconds$/);
  });
});
