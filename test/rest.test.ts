/**
 * The REST contract over a real socket, on every test database: the exact JSON of the contract's
 * example, statuses, messages and headers of both paths.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { CONTRACT_EXAMPLE } from './support/contract-example.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';

const INVALID_NAME = { error: 'Invalid name format, expected <local>@<domain>' };

/** Owner-check fixtures: who owns `truth` and who created each of its names. */
const TRUTH_TABLE_DATA = [
  { kind: 'namespace', name: 'truth', ownerEmail: 'Owner@Truth.example' },
  { kind: 'profile', name: 'made@truth', creatorEmail: 'Creator@Truth.example' },
  { kind: 'profile', name: 'self@truth', creatorEmail: 'owner@truth.example' },
].map((line) => JSON.stringify(line));

describe.each(databaseKinds())('REST on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;

  const get = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, init);
  const ownerCheck = (query: string) => get(`/api/owner-check?${query}`);

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    const report = await importLines(handle.db, TRUTH_TABLE_DATA);
    expect(report.ok).toBe(true);
    server = await startTestServer(handle, { OWNER_CHECK_LIMIT: '1000', CACHE_MAX_AGE: '60' });
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  describe('profile lookup', () => {
    it('answers the contract example, fields and keys in order', async () => {
      const response = await get('/api/demo@me');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const text = await response.text();
      // Same structure and order: compare the serialisations, not just deep equality.
      expect(text).toBe(JSON.stringify(JSON.parse(CONTRACT_EXAMPLE)));
    });

    it.each(['/api/Demo@ME', '/api/demo%40me', '/api/DEMO%40Me', `/api/${encodeURIComponent('demo@me')}`])(
      'finds %s case-insensitively and percent-decoded, answering the canonical name',
      async (path) => {
        const response = await get(path);
        expect(response.status).toBe(200);
        expect(((await response.json()) as { name: string }).name).toBe('demo@me');
      },
    );

    it('finds a non-ASCII name given in NFD', async () => {
      const nfd = 'zoë.müller@studio'.normalize('NFD');
      expect(nfd).not.toBe('zoë.müller@studio');
      const response = await get(`/api/${encodeURIComponent(nfd.toUpperCase())}`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { name: string; attributes: Array<{ value: unknown }> };
      expect(body.name).toBe('zoë.müller@studio');
      expect(body.attributes[2]!.value).toBe(17);
    });

    it('answers a profile without records with an empty object', async () => {
      const response = await get('/api/empty@me');
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['name', 'description', 'image', 'attributes', 'records']);
      expect(body.records).toEqual({});
      expect(body.description).toBe('');
      expect(body.image).toBe('');
    });

    it('answers 404 for a valid name that does not exist', async () => {
      const response = await get('/api/nobody@me');
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'Profile not found' });
    });

    it.each([
      ['no @', 'demome'],
      ['a second @', 'a@b@me'],
      ['an empty local part', '@me'],
      ['an empty domain', 'demo@'],
      ['a leading dot', '.demo@me'],
      ['a trailing hyphen', 'demo-@me'],
      ['whitespace', 'de%20mo@me'],
      ['an encoded slash', 'a%2Fb@me'],
      ['an encoded question mark', 'a%3Fb@me'],
      ['an encoded hash', 'a%23b@me'],
      ['a percent sign after decoding', 'a%2525b@me'],
      ['a NUL', 'a%00b@me'],
      ['a control character', 'a%07b@me'],
      ['an emoji', `${encodeURIComponent('😀')}@me`],
      ['a 64-character local part', `${'a'.repeat(64)}@me`],
      ['a name over 127 characters', `${'a'.repeat(63)}@${'b'.repeat(63)}x`],
      ['invalid percent-encoding', 'a%zzb@me'],
      ['an empty name', ''],
    ])('answers 400 for %s', async (_label, name) => {
      const response = await get(`/api/${name}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(INVALID_NAME);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
    });

    it('sends a strong ETag and Cache-Control, and 304 on If-None-Match', async () => {
      const first = await get('/api/demo@me');
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[^"]+"$/);
      expect(first.headers.get('cache-control')).toBe('public, max-age=60');

      const again = await get('/api/demo@me', { headers: { 'If-None-Match': etag! } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(etag);

      const listed = await get('/api/demo@me', { headers: { 'If-None-Match': `"other", W/${etag}` } });
      expect(listed.status).toBe(304);
      const stale = await get('/api/demo@me', { headers: { 'If-None-Match': '"stale"' } });
      expect(stale.status).toBe(200);
    });

    it('changes the ETag when an import changes the profile, and only then', async () => {
      const before = (await get('/api/blank@me')).headers.get('etag');
      const same = [
        JSON.stringify({ kind: 'profile', name: 'twin@truth', creatorEmail: 'x@truth.example', description: 'one' }),
      ];
      expect((await importLines(handle.db, same)).ok).toBe(true);
      const twin = (await get('/api/twin@truth')).headers.get('etag');
      expect((await importLines(handle.db, same)).ok).toBe(true);
      expect((await get('/api/twin@truth')).headers.get('etag')).toBe(twin);
      const changed = [
        JSON.stringify({ kind: 'profile', name: 'twin@truth', creatorEmail: 'x@truth.example', description: 'two' }),
      ];
      expect((await importLines(handle.db, changed)).ok).toBe(true);
      expect((await get('/api/twin@truth')).headers.get('etag')).not.toBe(twin);
      expect((await get('/api/blank@me')).headers.get('etag')).toBe(before);
    });

    it('answers HEAD like GET without a body', async () => {
      const response = await get('/api/demo@me', { method: 'HEAD' });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).toMatch(/^"/);
      expect(Number(response.headers.get('content-length'))).toBeGreaterThan(100);
      expect(await response.text()).toBe('');
    });
  });

  describe('owner check', () => {
    const expectAnswer = async (query: string, hasCreated: boolean, email: string, name: string) => {
      const response = await ownerCheck(query);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const text = await response.text();
      expect(text).toBe(JSON.stringify({ hasCreated, email, name }));
    };

    it('is true for the creator of the name', () =>
      expectAnswer('email=creator@truth.example&name=made@truth', true, 'creator@truth.example', 'made@truth'));
    it('is true for the owner of the namespace', () =>
      expectAnswer('email=owner@truth.example&name=made@truth', true, 'owner@truth.example', 'made@truth'));
    it('is true for someone who is both', () =>
      expectAnswer('email=owner@truth.example&name=self@truth', true, 'owner@truth.example', 'self@truth'));
    it('is false for anyone else', () =>
      expectAnswer('email=someone@truth.example&name=made@truth', false, 'someone@truth.example', 'made@truth'));
    it('is false for a name that does not exist, even for the namespace owner', () =>
      expectAnswer('email=owner@truth.example&name=ghost@truth', false, 'owner@truth.example', 'ghost@truth'));
    it('compares e-mails and names case-insensitively and echoes them as given', () =>
      expectAnswer('email=CREATOR@Truth.EXAMPLE&name=Made@TRUTH', true, 'CREATOR@Truth.EXAMPLE', 'Made@TRUTH'));
    it('trims the values it echoes', () =>
      expectAnswer(
        `email=${encodeURIComponent('  creator@truth.example ')}&name=${encodeURIComponent('\tmade@truth ')}`,
        true,
        'creator@truth.example',
        'made@truth',
      ));
    it('accepts a percent-encoded @ and NFD names', () =>
      expectAnswer(
        `email=zoe%40example.org&name=${encodeURIComponent('zoë.müller@studio'.normalize('NFD'))}`,
        true,
        'zoe@example.org',
        'zoë.müller@studio'.normalize('NFD'),
      ));

    it.each([
      ['no parameters', ''],
      ['no email', 'name=demo@me'],
      ['no name', 'email=a@example.com'],
      ['an empty email', 'email=&name=demo@me'],
      ['a blank name', 'email=a@example.com&name=%20%20'],
    ])('answers 400 "both required" for %s', async (_label, query) => {
      const response = await ownerCheck(query);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: 'Both email and name parameters are required' });
      expect(response.headers.get('cache-control')).toBe('no-store');
    });

    it.each([
      ['an invalid e-mail', 'email=not-an-email&name=demo@me', 'Invalid email format'],
      ['an e-mail over 254 characters', `email=${'a'.repeat(250)}@b.cd&name=demo@me`, 'Invalid email format'],
      ['both invalid (e-mail first)', 'email=nope&name=nope', 'Invalid email format'],
      ['an invalid name', 'email=a@example.com&name=demo', INVALID_NAME.error],
      ['a repeated email', 'email=a@example.com&email=b@example.com&name=demo@me', 'Invalid email format'],
      ['a repeated name', 'email=a@example.com&name=demo@me&name=demo@me', INVALID_NAME.error],
    ])('answers 400 for %s', async (_label, query, message) => {
      const response = await ownerCheck(query);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: message });
    });

    it('never shows a private e-mail', async () => {
      const texts = await Promise.all(
        ['/api/demo@me', '/api/made@truth', '/api/owner-check?email=x@example.com&name=made@truth'].map(async (path) =>
          (await get(path)).text(),
        ),
      );
      for (const text of texts) {
        expect(text.toLowerCase()).not.toContain('creator@truth.example');
        expect(text.toLowerCase()).not.toContain('owner@truth.example');
        expect(text).not.toContain('maker@example.com');
      }
    });
  });

  describe('other responses', () => {
    it('answers 405 with Allow for another method on /api paths', async () => {
      for (const [method, path] of [
        ['POST', '/api/demo@me'],
        ['DELETE', '/api/demo@me'],
        ['PUT', '/api/owner-check'],
        ['PATCH', '/api/anything/else'],
      ] as const) {
        const response = await get(path, { method });
        expect(response.status, `${method} ${path}`).toBe(405);
        expect(response.headers.get('allow')).toBe('GET, HEAD');
        expect(await response.json()).toEqual({ error: 'Method not allowed' });
      }
    });

    it('answers CORS preflights', async () => {
      const response = await get('/api/demo@me', {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-allow-methods')).toContain('GET');
    });

    it('answers 404 JSON for unknown paths', async () => {
      for (const path of ['/', '/api', '/api/demo@me/extra', '/nothing/here']) {
        const response = await get(path);
        expect(response.status, path).toBe(404);
        expect(await response.json()).toEqual({ error: 'Not found' });
      }
    });

    it('answers requests the HTTP parser rejects with JSON too', async () => {
      const send = (raw: string) =>
        new Promise<string>((resolve, reject) => {
          const { hostname, port } = new URL(server.url);
          const socket = net.connect(Number(port), hostname);
          let answer = '';
          socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
          socket.on('close', () => resolve(answer)).on('error', reject);
          socket.write(raw);
        });
      const badLine = await send('GET /api/\x7f@me HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(badLine).toMatch(/^HTTP\/1\.1 400 /);
      expect(badLine.endsWith('{"error":"Bad request"}')).toBe(true);
      const hugeHeader = await send(`GET /api/demo@me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(hugeHeader).toMatch(/^HTTP\/1\.1 431 /);
      expect(hugeHeader).toContain('application/json');
    });

    it('echoes a sane X-Request-Id and makes one up otherwise', async () => {
      const echoed = await get('/api/demo@me', { headers: { 'X-Request-Id': 'client-id-42' } });
      expect(echoed.headers.get('x-request-id')).toBe('client-id-42');
      const replaced = await get('/api/demo@me', { headers: { 'X-Request-Id': 'bad id with spaces' } });
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const missing = await get('/api/nothing/here');
      expect(missing.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });
});
