/**
 * WebFinger (RFC 7033) over a real socket, on every test database: the JRD of an `acct:` name,
 * its links from PUBLIC_URL only, `rel` filtering, CORS, the 400/404 rules and the budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { rawClient } from './support/raw-http.js';

const PUBLIC_URL = 'https://names.test';
const AVATAR = 'http://webfinger.net/rel/avatar';
const PROFILE_PAGE = 'http://webfinger.net/rel/profile-page';

interface Jrd {
  subject: string;
  aliases: string[];
  links: Array<{ rel: string; type: string; href: string }>;
}

describe.each(databaseKinds())('WebFinger on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;

  const webfinger = (query: string, init: RequestInit = {}) =>
    fetch(`${server.url}/.well-known/webfinger${query}`, init);
  const jrdOf = async (query: string) => {
    const response = await webfinger(query);
    expect(response.status, query).toBe(200);
    return (await response.json()) as Jrd;
  };

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    server = await startTestServer(handle, { PUBLIC_URL, PROFILE_LIMIT: '100000' });
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('answers the JRD of an acct: name with the self, avatar and profile-page links', async () => {
    const response = await webfinger('?resource=acct:Demo@ME');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/jrd+json');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
    const jrd = (await response.json()) as Jrd;
    expect(Object.keys(jrd)).toEqual(['subject', 'aliases', 'links']);
    expect(jrd.subject).toBe('acct:demo@me');
    expect(jrd.aliases).toEqual([`${PUBLIC_URL}/api/demo@me`]);
    expect(jrd.links).toEqual([
      { rel: 'self', type: 'application/json', href: `${PUBLIC_URL}/api/demo@me` },
      {
        rel: AVATAR,
        type: 'image/*',
        href: expect.stringMatching(/^https:\/\/names\.test\/api\/demo@me\/avatar\?size=256&v=/),
      },
      { rel: PROFILE_PAGE, type: 'text/html', href: 'https://profiles.example.org/demo@me' },
    ]);
    // The avatar link is the same URL GraphQL's avatarUrl writes.
    const graphql = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ profile(name: "demo@me") { avatarUrl } }' }),
    });
    const { data } = (await graphql.json()) as { data: { profile: { avatarUrl: string } } };
    expect(jrd.links[1]?.href).toBe(data.profile.avatarUrl);
  });

  it('leaves the profile page out when the web_url record is empty or missing', async () => {
    for (const name of ['blank@me', 'empty@me']) {
      const jrd = await jrdOf(`?resource=acct:${name}`);
      expect(jrd.links.map((link) => link.rel)).toEqual(['self', AVATAR]);
    }
  });

  it('encodes non-ASCII names in links, and reads them percent-encoded in the acct: URI too', async () => {
    const plain = await jrdOf(`?resource=${encodeURIComponent('acct:АЛИСА@мир')}`);
    expect(plain.subject).toBe('acct:алиса@мир');
    expect(plain.aliases).toEqual([`${PUBLIC_URL}/api/%D0%B0%D0%BB%D0%B8%D1%81%D0%B0@%D0%BC%D0%B8%D1%80`]);
    expect(plain.links[2]).toEqual({
      rel: PROFILE_PAGE,
      type: 'text/html',
      href: 'https://profiles.example.org/%D0%B0%D0%BB%D0%B8%D1%81%D0%B0@%D0%BC%D0%B8%D1%80',
    });
    // RFC 7565: an acct: URI percent-encodes non-ASCII; the query encodes that URI once more.
    const uri = `acct:${encodeURIComponent('алиса')}@${encodeURIComponent('мир')}`;
    expect(await jrdOf(`?resource=${encodeURIComponent(uri)}`)).toEqual(plain);
    expect((await jrdOf('?resource=ACCT:demo@me')).subject).toBe('acct:demo@me');
  });

  it('returns only the links of the rels asked for, rel given any number of times', async () => {
    const rels = async (query: string) => (await jrdOf(`?resource=acct:demo@me${query}`)).links.map((link) => link.rel);
    expect(await rels(`&rel=${encodeURIComponent(AVATAR)}`)).toEqual([AVATAR]);
    expect(await rels(`&rel=${encodeURIComponent(PROFILE_PAGE)}&rel=self`)).toEqual(['self', PROFILE_PAGE]);
    expect(await rels('&rel=http%3A%2F%2Fexample.org%2Fother')).toEqual([]);
    const filtered = await jrdOf(`?resource=acct:demo@me&rel=self`);
    expect(filtered.subject).toBe('acct:demo@me');
    expect(filtered.aliases).toEqual([`${PUBLIC_URL}/api/demo@me`]);
  });

  it.each([
    ['no resource', '', 'The resource parameter is required'],
    ['an empty resource', '?resource=', 'The resource parameter is required'],
    ['a name without acct:', '?resource=demo@me', 'Invalid resource, expected acct:<local>@<domain>'],
    ['another scheme', '?resource=mailto:demo@me', 'Invalid resource, expected acct:<local>@<domain>'],
    [
      'an http URL',
      '?resource=https%3A%2F%2Fnames.test%2Fapi%2Fdemo%40me',
      'Invalid resource, expected acct:<local>@<domain>',
    ],
    ['an invalid name', '?resource=acct:demo', 'Invalid resource, expected acct:<local>@<domain>'],
    ['bad percent-encoding', '?resource=acct:de%2525zzmo@me', 'Invalid resource, expected acct:<local>@<domain>'],
    [
      'two resources',
      '?resource=acct:demo@me&resource=acct:demo@me',
      'Invalid resource, expected acct:<local>@<domain>',
    ],
  ])('answers 400 for %s', async (_label, query, message) => {
    const response = await webfinger(query);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: message });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers CORS preflights here and on the other new paths', async () => {
    for (const path of ['/.well-known/webfinger', '/api/demo@me/avatar', '/api/demo@me/vcard', '/api/profiles']) {
      const response = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
      });
      expect(response.status, path).toBe(204);
      expect(response.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(response.headers.get('access-control-allow-methods'), path).toMatch(/^GET, HEAD/);
      expect(response.headers.get('x-request-id'), path).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('answers 404 for a valid name without a profile', async () => {
    const response = await webfinger('?resource=acct:nobody@me');
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'Profile not found' });
  });

  it('never builds a link from the Host or X-Forwarded-* headers', async () => {
    // node:http, since fetch will not send a Host of the caller's choosing.
    const client = rawClient(server.url);
    const response = await client.send('/.well-known/webfinger?resource=acct:demo@me', {
      headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' },
    });
    client.close();
    const jrd = JSON.parse(response.text) as Jrd;
    expect(JSON.stringify(jrd)).not.toContain('evil.example');
    expect(jrd.aliases[0]?.startsWith(`${PUBLIC_URL}/`)).toBe(true);
  });
});

describe('WebFinger budget', () => {
  it('takes one point of the profile budget per request, valid or not', async () => {
    const testDb = await createTestDatabase('pglite');
    const handle = await testDb.open();
    await seedDemoData(handle.db);
    const server = await startTestServer(handle, { PROFILE_LIMIT: '3' });
    try {
      const remaining = async (query: string) =>
        (await fetch(`${server.url}/.well-known/webfinger${query}`)).headers.get('ratelimit-remaining');
      expect(await remaining('?resource=acct:demo@me')).toBe('2');
      expect(await remaining('?resource=nonsense')).toBe('1');
      expect(await remaining('')).toBe('0');
      const over = await fetch(`${server.url}/.well-known/webfinger?resource=acct:demo@me`);
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await server.close();
      await handle.close();
      await testDb.drop();
    }
  });
});
