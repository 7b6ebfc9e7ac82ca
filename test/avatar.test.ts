/**
 * Avatars over a real socket, on every test database: `GET /api/{name_id}/avatar` with
 * AVATAR_PROXY=off redirects to a stored http(s) image (test/avatar-images.test.ts has the images
 * the service fetches itself), or answers the fallback (initials SVG, 404, or a client's https URL), and
 * GraphQL `Profile.avatarUrl` writes PUBLIC_URL links whose `v=` changes exactly when the answer does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { avatarColour, initialOf, initialsSvg } from '../src/profiles/avatar-svg.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { rawClient } from './support/raw-http.js';

const PUBLIC_URL = 'https://names.test/base';
const INVALID_SIZE = { error: 'Invalid size, expected an integer from 16 to 1024' };
const INVALID_FALLBACK = { error: 'Invalid fallback, expected initials, 404 or an https URL' };
const IMMUTABLE = 'public, max-age=31536000, immutable';
const PROFILE_CACHING = 'public, max-age=60';

const ODD_IMAGES = ndjson(
  { kind: 'profile', name: 'script@me', creatorEmail: 'x@example.com', image: 'javascript:alert(1)' },
  { kind: 'profile', name: 'ftp@me', creatorEmail: 'x@example.com', image: 'ftp://files.example.org/a.png' },
  { kind: 'profile', name: 'spaced@me', creatorEmail: 'x@example.com', image: ' http://img.example.org/a b.png ' },
);

describe('the initials drawing', () => {
  it('upper-cases the first character of the local part, keeping characters whose upper case is longer', () => {
    expect(initialOf('demo')).toBe('D');
    expect(initialOf('élan')).toBe('É');
    expect(initialOf('はなこ')).toBe('は');
    expect(initialOf('алиса')).toBe('А');
    expect(initialOf('ßtraße')).toBe('ß');
    expect(initialOf('9lives')).toBe('9');
    expect(initialOf('𝒜bc')).toBe('𝒜');
  });

  it('derives one colour per name, and different colours for different names', () => {
    expect(avatarColour('demo@me')).toBe(avatarColour('demo@me'));
    expect(avatarColour('demo@me')).toMatch(/^#[0-9a-f]{6}$/);
    const colours = new Set(['a@me', 'b@me', 'c@me', 'd@me', 'e@me', 'f@me'].map(avatarColour));
    expect(colours.size).toBeGreaterThan(3);
  });

  it('is a size×size SVG with the initial as its only text and nothing active', () => {
    const svg = initialsSvg('zoë.müller@studio', 64);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="64" height="64" viewBox="0 0 64 64"/);
    expect(svg).toContain('>Z</text>');
    expect(svg).not.toMatch(/<script|on\w+=|href|url\(|<foreignObject|<!ENTITY/i);
  });
});

describe.each(databaseKinds())('avatars on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;

  const avatar = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/api/${path}`, { redirect: 'manual', ...init });
  /** Through node:http, which sends the Host header given (fetch would not). */
  const graphql = async (query: string, headers: Record<string, string> = {}) => {
    const client = rawClient(server.url);
    const response = await client.send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query }),
    });
    client.close();
    return JSON.parse(response.text) as {
      data?: Record<string, { avatarUrl?: string } | null>;
      errors?: Array<{ message: string; extensions: { code: string } }>;
    };
  };
  const avatarUrlOf = async (name: string, args = '') =>
    (await graphql(`{ profile(name: ${JSON.stringify(name)}) { avatarUrl${args} } }`)).data?.profile?.avatarUrl ?? '';
  /** The path and query of an avatarUrl, to ask this test server for it. */
  const localPath = (url: string) => url.slice(`${PUBLIC_URL}/api/`.length);

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    expect((await importLines(handle.db, ODD_IMAGES)).problems).toEqual([]);
    // No profile cache: a test changes a profile by import and reads it back at once.
    server = await startTestServer(handle, {
      AVATAR_PROXY: 'off',
      PUBLIC_URL,
      PROFILE_LIMIT: '100000',
      CACHE_MAX_AGE: '60',
      PROFILE_CACHE_SIZE: '0',
    });
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('redirects to the stored http(s) image with AVATAR_PROXY=off, whatever the fallback, without fetching it', async () => {
    for (const query of ['', '?fallback=404', '?fallback=https://other.example/x.png', '?size=16']) {
      const response = await avatar(`demo@me/avatar${query}`);
      expect(response.status, query).toBe(302);
      expect(response.headers.get('location')).toBe('https://img.example.org/avatars/demo@me.jpg');
      expect(response.headers.get('cache-control')).toBe(PROFILE_CACHING);
      expect(await response.text()).toBe('');
    }
    // Stored with white space and a space inside: the redirect is the parsed, encoded URL.
    expect((await avatar('spaced@me/avatar')).headers.get('location')).toBe('http://img.example.org/a%20b.png');
  });

  it('draws the initials for a profile without an http(s) image and for a name without a profile', async () => {
    for (const [name, initial] of [
      ['empty@me', 'E'],
      ['script@me', 'S'],
      ['ftp@me', 'F'],
      ['nobody@me', 'N'],
      [encodeURIComponent('はなこ@me'), 'は'],
      [encodeURIComponent('Zoë.Müller@NOWHERE'), 'Z'],
    ] as const) {
      const response = await avatar(`${name}/avatar`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/svg+xml');
      expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'");
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('cache-control')).toBe(PROFILE_CACHING);
      const svg = await response.text();
      expect(svg).toBe(initialsSvg(decodeURIComponent(name).normalize('NFC').toLowerCase(), 256));
      expect(svg).toContain(`>${initial}</text>`);
    }
  });

  it('draws the size asked for, 16 to 1024', async () => {
    for (const size of [16, 100, 1024]) {
      const svg = await (await avatar(`empty@me/avatar?size=${size}`)).text();
      expect(svg).toContain(`width="${size}" height="${size}" viewBox="0 0 ${size} ${size}"`);
    }
  });

  it('answers fallback=404 with "Profile not found" or "No avatar"', async () => {
    const missing = await avatar('nobody@me/avatar?fallback=404');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'Profile not found' });
    const imageless = await avatar('script@me/avatar?fallback=404');
    expect(imageless.status).toBe(404);
    expect(await imageless.json()).toEqual({ error: 'No avatar' });
  });

  it('redirects to an https fallback URL, serialised', async () => {
    const response = await avatar(`nobody@me/avatar?fallback=${encodeURIComponent('https://Cdn.Example/é.png?x=1')}`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://cdn.example/%C3%A9.png?x=1');
  });

  it.each([
    ['15', INVALID_SIZE],
    ['1025', INVALID_SIZE],
    ['abc', INVALID_SIZE],
    ['', INVALID_SIZE],
    ['1e2', INVALID_SIZE],
    ['+64', INVALID_SIZE],
    ['64.0', INVALID_SIZE],
    ['64&size=64', INVALID_SIZE],
  ])('answers 400 for size=%s', async (size, body) => {
    const response = await avatar(`demo@me/avatar?size=${size}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(body);
  });

  it.each([
    ['http://cdn.example/a.png'],
    ['https://'],
    ['ftp://cdn.example/a.png'],
    ['//cdn.example/a.png'],
    ['Initials'],
    ['https://user:secret@cdn.example/a.png'],
    ['https://cdn.example/a\tb.png'],
    [`https://cdn.example/${'a'.repeat(2049 - 'https://cdn.example/'.length)}`],
    ['javascript:alert(1)'],
  ])('answers 400 for fallback=%s', async (fallback) => {
    const response = await avatar(`demo@me/avatar?fallback=${encodeURIComponent(fallback)}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(INVALID_FALLBACK);
  });

  it('accepts a fallback URL of exactly 2048 characters, and refuses a repeated fallback', async () => {
    const url = `https://cdn.example/${'a'.repeat(2048 - 'https://cdn.example/'.length)}`;
    expect((await avatar(`nobody@me/avatar?fallback=${url}`)).status).toBe(302);
    const twice = await avatar('nobody@me/avatar?fallback=404&fallback=404');
    expect(await twice.json()).toEqual(INVALID_FALLBACK);
  });

  it('reports an invalid name before an invalid size', async () => {
    const response = await avatar('not-a-name/avatar?size=1');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'Invalid name format, expected <local>@<domain>' });
  });

  it('sends a strong ETag with the SVG and 304 for a matching If-None-Match; HEAD without a body', async () => {
    const first = await avatar('empty@me/avatar?size=48');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await avatar('empty@me/avatar?size=48', { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(await again.text()).toBe('');
    expect((await avatar('empty@me/avatar?size=49')).headers.get('etag')).not.toBe(etag);
    const head = await avatar('empty@me/avatar?size=48', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(etag);
    expect(await head.text()).toBe('');
    // No ETag on a redirect: preconditions do not apply to it (RFC 9110 §13.2.1).
    expect((await avatar('demo@me/avatar')).headers.get('etag')).toBeNull();
  });

  it('writes avatarUrl from PUBLIC_URL, never from the Host or X-Forwarded-* headers', async () => {
    const forged = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' };
    const body = await graphql('{ profile(name: "Demo@ME") { avatarUrl small: avatarUrl(size: 32) } }', forged);
    const { avatarUrl, small } = (body.data?.profile ?? {}) as { avatarUrl: string; small: string };
    expect(avatarUrl).toMatch(/^https:\/\/names\.test\/base\/api\/demo@me\/avatar\?size=256&v=[\w-]+$/);
    expect(small).toBe(avatarUrl.replace('size=256', 'size=32'));
    expect(await avatarUrlOf('zoë.müller@studio')).toMatch(
      /^https:\/\/names\.test\/base\/api\/zo%C3%AB\.m%C3%BCller@studio\/avatar\?size=256&v=/,
    );
    expect(await avatarUrlOf('demo@me', '(size: null)')).toBe(avatarUrl);
  });

  it('refuses an avatarUrl size outside 16 to 1024 as BAD_USER_INPUT', async () => {
    for (const size of [15, 1025, -1]) {
      const body = await graphql(`{ profile(name: "demo@me") { avatarUrl(size: ${size}) } }`);
      expect(body.errors?.map((error) => [error.message, error.extensions.code])).toEqual([
        [INVALID_SIZE.error, 'BAD_USER_INPUT'],
      ]);
    }
  });

  it('caches an avatarUrl answer for good; without v or with an old v, only as long as a profile', async () => {
    for (const name of ['demo@me', 'empty@me']) {
      const url = await avatarUrlOf(name);
      const current = await avatar(localPath(url));
      expect(current.headers.get('cache-control'), name).toBe(IMMUTABLE);
      const old = await avatar(localPath(url).replace(/v=[\w-]+/, 'v=old'));
      expect(old.headers.get('cache-control'), name).toBe(PROFILE_CACHING);
    }
  });

  it('changes the version exactly when the avatar answer changes', async () => {
    const write = async (profile: Record<string, unknown>) => {
      const line = { kind: 'profile', name: 'pic@me', creatorEmail: 'x@example.com', ...profile };
      expect((await importLines(handle.db, ndjson(line))).problems).toEqual([]);
    };
    const versionAfter = async (description: string) => {
      expect((await graphql('{ profile(name: "pic@me") { description } }')).data?.profile).toEqual({ description });
      return avatarUrlOf('pic@me');
    };
    await write({ image: 'https://img.example.org/one.png', description: 'a' });
    const one = await versionAfter('a');
    await write({ image: 'https://img.example.org/one.png', description: 'b', level: 3 });
    expect(await versionAfter('b')).toBe(one);

    await write({ image: 'https://img.example.org/two.png', description: 'c' });
    const two = await versionAfter('c');
    expect(two).not.toBe(one);
    const stale = await avatar(localPath(one));
    expect(stale.headers.get('location')).toBe('https://img.example.org/two.png');
    expect(stale.headers.get('cache-control')).toBe(PROFILE_CACHING);

    // No http(s) image: the initials, the same answer (and version) as for any image-less profile.
    await write({ image: 'not a url', description: 'd' });
    const drawn = await versionAfter('d');
    expect(drawn).not.toBe(two);
    await write({ image: '', description: 'e' });
    expect(await versionAfter('e')).toBe(drawn);
    expect(localPath(drawn).replace('pic@me', 'empty@me')).toBe(localPath(await avatarUrlOf('empty@me')));
  });
});
