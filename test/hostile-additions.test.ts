/**
 * Hostile input on the paths for apps that are not GraphQL clients, property-based (fast-check),
 * on every test database: batch lookup (GET and POST), avatar, vCard, WebFinger and GraphQL
 * `avatarUrl`, with generated names, query strings, bodies, content types and forged Host /
 * X-Forwarded-* headers.
 *
 * No input gets a 5xx; every answer is one of the path's statuses with its content type; where
 * the input decides the outcome it is the expected one (an SVG equal to the drawing of the
 * validated name, keys that are the canonical names asked for…); and nothing of the request
 * (Host, X-Forwarded-*, query) ends up in a link, a redirect or an SVG, other than a validated
 * name (percent-encoded) or the client's own https fallback URL, serialised. The data is
 * unchanged afterwards. A failing property prints fast-check's seed and the shrunk input.
 */
import fc from 'fast-check';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { parseNameId } from '../src/names/name-id.js';
import { escapeXml, initialOf, initialsSvg } from '../src/profiles/avatar-svg.js';
import { namePath } from '../src/service/links.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { exportText, ndjson, snapshotDatabase } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { FRAGMENTS, HOSTILE_LOOKING_DATA, hostileText, nameLike, rawEncode } from './support/hostile-text.js';
import { type RawClient, type RawResponse, rawClient } from './support/raw-http.js';

const PUBLIC_URL = 'https://names.test/base';
/** A marker no generated input contains: found in an answer, it came from a forged header. */
const FORGED_HOST = 'forged-host.invalid';
const JSON_TYPE = 'application/json; charset=utf-8';

/** Stored data with hostile links and text: redirects and links must still be clean URLs. */
const HOSTILE_LINK_DATA = [
  {
    kind: 'profile',
    name: 'quotes@sql',
    creatorEmail: 'q@example.net',
    description: 'line one\r\nline two; with, commas \\ and "quotes" <b>bold</b>',
    image: 'https://img.example.org/a"><script>alert(1)</script>',
    records: {
      '1': { type: 'name', value: '</text><script>alert(1)</script>' },
      '3': { type: 'website', value: 'https://site.example/"onmouseover="alert(1)' },
      '4': { type: 'phone', value: '+1 (555) 0100,<script>,;\\' },
      '6': { type: 'social', value: { 'x;y:"z"': 'a\r\nb', twitter: '"><img src=x>', telegram: '../../etc' } },
      '50': { type: 'web_url', value: 'javascript:alert(1)' },
    },
  },
  {
    kind: 'profile',
    name: 'newline@sql',
    creatorEmail: 'q@example.net',
    image: 'http://img.example.org/\u00e9t\u00e9 photo.png',
    records: { '50': { type: 'web_url', value: 'https://pages.example.org/a b?c="d"' } },
  },
];

/** Host headers a proxy or attacker may send (printable ASCII: Node's client refuses others). */
const hostHeader = fc.constantFrom(
  FORGED_HOST,
  `${FORGED_HOST}:8443`,
  `${FORGED_HOST}/path?x=<script>`,
  `"${FORGED_HOST}"`,
  `${FORGED_HOST}@names.test`,
);
const forgedHeaders = hostHeader.map((host) => ({
  host,
  'x-forwarded-host': host,
  'x-forwarded-proto': 'javascript',
  'x-forwarded-prefix': `/${FORGED_HOST}`,
  forwarded: `host=${FORGED_HOST};proto=http`,
}));

/** Names that exist, in other spellings too, so that the answers with a body get exercised. */
const knownName = fc.constantFrom(
  'demo@me',
  'DEMO@me',
  'empty@me',
  'nobody@me',
  'zoë.müller@studio',
  'ZOË.müller@studio'.normalize('NFD'),
  'алиса@мир',
  'はなこ@me',
  'quotes@sql',
  'newline@sql',
  'bobby-tables@sql',
);
const someName = fc.oneof({ weight: 2, arbitrary: knownName }, { weight: 3, arbitrary: nameLike });

/** Values of `size`: mostly valid, then near the edges, then not numbers at all. */
const sizeLike = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 16, max: 1024 }).map(String) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('15', '1025', '0', '-16', '016', '1e2', '+64', '64.0', ' 64', '0x40', '9'.repeat(20)),
  },
  { weight: 1, arbitrary: hostileText },
);
/** Values of `fallback`: the keywords, https URLs (hostile paths included), and anything else. */
const fallbackLike = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('initials', '404', 'Initials', ' 404') },
  { weight: 2, arbitrary: fc.webUrl({ validSchemes: ['https'], withQueryParameters: true, withFragments: true }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom('https://cdn.example/', 'http://cdn.example/', 'https:', 'HTTPS://CDN.example/'),
        hostileText,
      )
      .map(([base, tail]) => base + tail),
  },
  { weight: 1, arbitrary: hostileText },
);
/** A query string of the parameters, each absent, given once (mostly) or twice, plus junk. */
const queryOf = (parameters: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> =>
  fc
    .tuple(
      ...Object.entries(parameters).map(([key, value]) =>
        fc
          .oneof(
            { weight: 2, arbitrary: fc.constant([]) },
            { weight: 5, arbitrary: value.map((text) => [text]) },
            { weight: 1, arbitrary: fc.array(value, { minLength: 2, maxLength: 2 }) },
          )
          .map((values) => values.map((text) => `${key}=${encodeURIComponent(text)}`)),
      ),
      fc.option(hostileText.map(rawEncode), { freq: 4 }),
    )
    .map((parts) =>
      parts
        .flat()
        .filter((part): part is string => typeof part === 'string')
        .join('&'),
    );

/**
 * A string as one raw path segment: as the hostile suite sends it (printable ASCII as is, `%`
 * included), but `/`, `?` and `#` encoded, so that the request reaches the path under test.
 */
const segmentOf = (text: string): string => rawEncode(text).replace(/[/?#]/g, (char) => encodeURIComponent(char));

/** The canonical name a raw path segment names, or null (undecodable, or invalid after decoding). */
function nameOfSegment(segment: string): string | null {
  try {
    return parseNameId(decodeURIComponent(segment))?.name ?? null;
  } catch {
    return null;
  }
}

/** Printable ASCII without spaces, quotes or angle brackets: what a serialised URL looks like. */
const CLEAN_URL = /^https?:\/\/[!#-;=?-[\]_a-z~]+$/i;

function expectNoForgedHost(response: RawResponse, context: string): void {
  expect(response.text.includes(FORGED_HOST), context).toBe(false);
  for (const [name, value] of Object.entries(response.headers)) {
    expect(String(value).includes(FORGED_HOST), `${context}: header ${name}`).toBe(false);
  }
}

function jsonError(response: RawResponse, context: string): string {
  expect(response.headers['content-type'], context).toBe(JSON_TYPE);
  const body = JSON.parse(response.text) as Record<string, unknown>;
  expect(typeof body.error, context).toBe('string');
  return body.error as string;
}

describe('the initials drawing under hostile names', () => {
  it('is always the same well-formed SVG with the escaped initial as its only text', () => {
    const svgShape =
      /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="(\d+)" height="\1" viewBox="0 0 \1 \1" role="img" aria-label="((?:[^<>&"]|&#\d+;)+)"><rect width="\1" height="\1" fill="#[0-9a-f]{6}"\/><text [^<>]*>((?:[^<>&]|&#\d+;)+)<\/text><\/svg>$/u;
    fc.assert(
      fc.property(
        fc.oneof(hostileText, nameLike, fc.string({ unit: 'binary' })),
        fc.integer({ min: 16, max: 1024 }),
        (name, size) => {
          const svg = initialsSvg(name, size);
          const match = svgShape.exec(svg);
          expect(match, svg).not.toBeNull();
          const at = name.indexOf('@');
          const initial = escapeXml(initialOf(at < 0 ? name : name.slice(0, at)));
          expect(match?.[2]).toBe(initial);
          expect(match?.[3]).toBe(initial);
          expect(svg).not.toMatch(/<script|javascript:|on\w+=/i);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe.each(databaseKinds())('hostile input on the REST additions, %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let client: RawClient;
  let before: { snapshot: Awaited<ReturnType<typeof snapshotDatabase>>; export: string };
  /** Stored http(s) images by canonical name, as the redirect must give them. */
  const storedImages = new Map<string, string>();

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    const report = await importLines(handle.db, ndjson(...HOSTILE_LOOKING_DATA, ...HOSTILE_LINK_DATA));
    expect(report.problems).toEqual([]);
    server = await startTestServer(handle, { PUBLIC_URL, OWNER_CHECK_LIMIT: '1000000', PROFILE_LIMIT: '100000000' });
    client = rawClient(server.url);
    before = { snapshot: await snapshotDatabase(handle.db), export: await exportText(handle.db) };
    for (const name of ['demo@me', 'zoë.müller@studio', 'алиса@мир', 'newline@sql', 'quotes@sql']) {
      const response = await client.send(`/api/${encodeURIComponent(name)}/avatar?fallback=404`);
      if (response.status === 302) storedImages.set(name, String(response.headers.location));
    }
    expect(storedImages.get('quotes@sql')).toBe('https://img.example.org/a%22%3E%3Cscript%3Ealert(1)%3C/script%3E');
  });
  afterAll(async () => {
    client?.close();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('GET /api/<name>/avatar?fallback=<https URL>: a redirect to a URI, or 400 when the URL is not one', async () => {
    // The URL parser leaves these characters raw in a query or fragment; a Location with them is
    // not a URI (this used to redirect to `https://cdn.example/#\`, now and then in the property below).
    for (const fallback of [
      'https://cdn.example/#\\',
      'https://cdn.example/a?b={c}',
      'https://cdn.example/a?b=c|d',
      'https://cdn.example/a#^',
      'https://cdn.example/a?%zz',
    ]) {
      const path = `/api/empty@me/avatar?fallback=${encodeURIComponent(fallback)}`;
      const response = await client.send(path);
      expect(response.status, path).toBe(400);
      expect(jsonError(response, path)).toBe('Invalid fallback, expected initials, 404 or an https URL');
    }
    // What the parser turns into a URI is taken as it serialises it.
    for (const [fallback, location] of [
      ['https://cdn.example/é?q=ü#ö', 'https://cdn.example/%C3%A9?q=%C3%BC#%C3%B6'],
      ['https://CDN.example/a/../b\\c?d="e"', 'https://cdn.example/b/c?d=%22e%22'],
      ['https://cdn.example/%41%7C', 'https://cdn.example/%41%7C'],
    ]) {
      const path = `/api/empty@me/avatar?fallback=${encodeURIComponent(fallback ?? '')}`;
      const response = await client.send(path);
      expect(response.status, path).toBe(302);
      expect(response.headers.location, path).toBe(location);
      expect(String(response.headers.location)).toMatch(CLEAN_URL);
    }
  });

  it('GET /api/<raw>/avatar?<query>: the SVG of the validated name, a clean redirect, or a JSON error', async () => {
    const query = queryOf({ size: sizeLike, fallback: fallbackLike, v: hostileText });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 3, arbitrary: knownName },
          { weight: 1, arbitrary: nameLike },
          { weight: 1, arbitrary: hostileText },
        ),
        query,
        forgedHeaders,
        async (text, search, headers) => {
          const segment = segmentOf(text);
          const path = `/api/${segment}/avatar?${search}`;
          const response = await client.send(path, { headers });
          const context = `${response.status} ${path}`;
          expect([200, 302, 400, 404], context).toContain(response.status);
          expectNoForgedHost(response, context);
          if (response.status === 200) {
            const name = nameOfSegment(segment);
            expect(name, context).not.toBeNull();
            expect(response.headers['content-type']).toBe('image/svg+xml');
            expect(response.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'");
            expect(response.headers['x-content-type-options']).toBe('nosniff');
            const size = /width="(\d+)"/.exec(response.text)?.[1];
            expect(response.text, context).toBe(initialsSvg(name ?? '', Number(size)));
          } else if (response.status === 302) {
            const location = String(response.headers.location);
            expect(location, context).toMatch(CLEAN_URL);
            const name = nameOfSegment(segment);
            const stored = name === null ? undefined : storedImages.get(name);
            if (stored !== undefined) expect(location, context).toBe(stored);
            else {
              // The client's own fallback: an https URL it sent, serialised.
              const fallbacks = new URLSearchParams(search).getAll('fallback');
              expect(
                fallbacks.some((fallback) => URL.canParse(fallback) && new URL(fallback).href === location),
                context,
              ).toBe(true);
              expect(location.startsWith('https://'), context).toBe(true);
            }
          } else {
            expect(
              [
                'Invalid name format, expected <local>@<domain>',
                'Invalid size, expected an integer from 16 to 1024',
                'Invalid fallback, expected initials, 404 or an https URL',
                'Profile not found',
                'No avatar',
                'Not found',
              ],
              context,
            ).toContain(jsonError(response, context));
          }
        },
      ),
      { numRuns: 500 },
    );
  }, 180_000);

  it('GET /api/<raw>/vcard: a vCard ical.js reads with links from PUBLIC_URL, or a JSON error', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 1, arbitrary: hostileText }, { weight: 3, arbitrary: someName }),
        forgedHeaders,
        async (text, headers) => {
          const segment = segmentOf(text);
          const response = await client.send(`/api/${segment}/vcard`, { headers });
          const context = `${response.status} /api/${segment}/vcard`;
          expect([200, 400, 404], context).toContain(response.status);
          expectNoForgedHost(response, context);
          if (response.status !== 200) {
            expect(['Invalid name format, expected <local>@<domain>', 'Profile not found', 'Not found']).toContain(
              jsonError(response, context),
            );
            return;
          }
          const name = nameOfSegment(segment) ?? '';
          const [, properties] = ICAL.parse(response.text) as unknown as [
            string,
            Array<[string, unknown, string, string]>,
          ];
          const source = properties.find((property) => property[0] === 'source')?.[3];
          expect(source).toBe(`${PUBLIC_URL}/api/${namePath(name)}/vcard`);
          expect(properties.find((property) => property[0] === 'nickname')?.[3]).toBe(name);
          for (const line of response.text.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
        },
      ),
      { numRuns: 300 },
    );
  }, 180_000);

  it('the vCard of hostile stored text reads back through ical.js, value for value', async () => {
    const response = await client.send('/api/quotes@sql/vcard');
    const [, properties] = ICAL.parse(response.text) as unknown as [string, Array<[string, unknown, string, string]>];
    const value = (name: string) =>
      properties.filter((property) => property[0] === name).map((property) => property[3]);
    expect(value('fn')).toEqual(['</text><script>alert(1)</script>']);
    expect(value('note')).toEqual(['line one\nline two; with, commas \\ and "quotes" <b>bold</b>']);
    expect(value('photo')).toEqual(['https://img.example.org/a%22%3E%3Cscript%3Ealert(1)%3C/script%3E']);
    expect(value('url')).toEqual(['https://site.example/%22onmouseover=%22alert(1)']);
    expect(value('tel')).toEqual(['tel:+1-(555)-0100', '<script>', ';\\']);
    expect(value('x-socialprofile')).toEqual(['a\nb', 'https://x.com/%22%3E%3Cimg%20src%3Dx%3E']);
    expect(value('impp')).toEqual(['https://t.me/..%2F..%2Fetc']);
  });

  it('GET /.well-known/webfinger?<query>: a JRD whose links start at PUBLIC_URL, or a JSON error', async () => {
    const resource = fc.oneof(
      { weight: 3, arbitrary: someName.map((name) => `acct:${name}`) },
      { weight: 1, arbitrary: someName.map((name) => `ACCT:${encodeURIComponent(name)}`) },
      { weight: 1, arbitrary: hostileText },
    );
    const rel = fc.oneof(
      fc.constantFrom('self', 'http://webfinger.net/rel/avatar', 'http://webfinger.net/rel/profile-page'),
      hostileText,
    );
    await fc.assert(
      fc.asyncProperty(queryOf({ resource, rel }), forgedHeaders, async (search, headers) => {
        const response = await client.send(`/.well-known/webfinger?${search}`, { headers });
        const context = `${response.status} ?${search}`;
        expect([200, 400, 404], context).toContain(response.status);
        expectNoForgedHost(response, context);
        if (response.status !== 200) {
          expect(
            [
              'The resource parameter is required',
              'Invalid resource, expected acct:<local>@<domain>',
              'Profile not found',
            ],
            context,
          ).toContain(jsonError(response, context));
          return;
        }
        expect(response.headers['content-type']).toBe('application/jrd+json');
        const jrd = JSON.parse(response.text) as {
          subject: string;
          aliases: string[];
          links: Array<{ rel: string; href: string }>;
        };
        const [given] = new URLSearchParams(search).getAll('resource');
        const name = parseNameId(decodeURIComponent((given ?? '').slice('acct:'.length)))?.name;
        expect(jrd.subject).toBe(`acct:${name}`);
        expect(jrd.aliases).toEqual([`${PUBLIC_URL}/api/${namePath(name ?? '')}`]);
        const rels = new URLSearchParams(search).getAll('rel');
        for (const link of jrd.links) {
          expect(link.href, context).toMatch(CLEAN_URL);
          if (link.rel !== 'http://webfinger.net/rel/profile-page')
            expect(link.href.startsWith(`${PUBLIC_URL}/api/`)).toBe(true);
          if (rels.length > 0) expect(rels).toContain(link.rel);
        }
      }),
      { numRuns: 400 },
    );
  }, 180_000);

  it('GET /api/profiles?names=<raw>: the canonical names asked for as keys, or a JSON error', async () => {
    const names = fc.oneof(
      fc.array(knownName, { minLength: 1, maxLength: 6 }),
      fc.array(someName, { minLength: 0, maxLength: 6 }),
    );
    await fc.assert(
      fc.asyncProperty(names, fc.boolean(), forgedHeaders, async (list, encode, headers) => {
        const joined = list.join(',');
        const path = `/api/profiles?names=${encode ? encodeURIComponent(joined) : rawEncode(joined)}`;
        const response = await client.send(path, { headers });
        const context = `${response.status} ${path}`;
        expect([200, 400], context).toContain(response.status);
        expectNoForgedHost(response, context);
        expect(response.headers['content-type']).toBe(JSON_TYPE);
        if (response.status === 400) {
          jsonError(response, context);
          return;
        }
        const given = new URLSearchParams(path.slice(path.indexOf('?')))
          .getAll('names')
          .filter((value) => value !== '');
        const asked = given.join(',').split(',');
        const expected = [...new Set(asked.map((name) => parseNameId(name)?.name))];
        expect(expected.includes(undefined), context).toBe(false);
        const body = JSON.parse(response.text) as { profiles: Record<string, { name: string } | null> };
        expect(Object.keys(body.profiles)).toEqual(expected);
        for (const [key, profile] of Object.entries(body.profiles))
          if (profile !== null) expect(profile.name).toBe(key);
      }),
      { numRuns: 400 },
    );
  }, 180_000);

  it('POST /api/profiles with hostile bodies and content types: 200, 400, 413 or 415, JSON', async () => {
    const body = fc.oneof(
      fc.array(knownName, { minLength: 1, maxLength: 5 }).map((names) => JSON.stringify({ names })),
      fc.array(someName, { maxLength: 5 }).map((names) => JSON.stringify({ names })),
      fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
      fc
        .dictionary(fc.constantFrom('names', '__proto__', 'constructor'), fc.jsonValue({ maxDepth: 2 }))
        .map((value) => JSON.stringify(value)),
      hostileText,
      fc.constantFrom(...FRAGMENTS),
    );
    const contentType = fc.constantFrom(
      'application/json',
      'application/json',
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json-patch+json',
      '',
    );
    await fc.assert(
      fc.asyncProperty(body, contentType, forgedHeaders, async (text, type, headers) => {
        const response = await client.send('/api/profiles', {
          method: 'POST',
          headers: { ...headers, ...(type === '' ? {} : { 'content-type': type }) },
          body: text,
        });
        const context = `${response.status} ${type} ${text.slice(0, 200)}`;
        expect([200, 400, 413, 415], context).toContain(response.status);
        expect(response.headers['content-type']).toBe(JSON_TYPE);
        expect(response.headers['cache-control']).toBe('no-store');
        if (response.status === 415) expect(type.split(';')[0]?.trim().toLowerCase()).not.toBe('application/json');
        if (response.status !== 200) jsonError(response, context);
      }),
      { numRuns: 400 },
    );
  }, 180_000);

  it('GraphQL avatarUrl with forged headers and any size: a PUBLIC_URL link or BAD_USER_INPUT', async () => {
    await fc.assert(
      fc.asyncProperty(
        someName,
        fc.oneof(fc.integer({ min: 16, max: 1024 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
        forgedHeaders,
        async (name, size, headers) => {
          const response = await client.send('/graphql', {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({
              query: 'query ($name: String!, $size: Int) { profile(name: $name) { avatarUrl(size: $size) } }',
              variables: { name, size },
            }),
          });
          const context = `${response.status} ${name} ${size}`;
          expect(response.status, context).toBe(200);
          expectNoForgedHost(response, context);
          const answer = JSON.parse(response.text) as {
            data: { profile: { avatarUrl: string } | null } | null;
            errors?: Array<{ extensions: { code: string } }>;
          };
          for (const error of answer.errors ?? []) expect(error.extensions.code).toBe('BAD_USER_INPUT');
          const url = answer.data?.profile?.avatarUrl;
          if (url === undefined) return;
          const parsed = parseNameId(name);
          expect(url).toBe(
            `${PUBLIC_URL}/api/${namePath(parsed?.name ?? '')}/avatar?size=${size}&v=${url.split('&v=')[1]}`,
          );
          expect(url.split('&v=')[1]).toMatch(/^[\w-]+$/);
        },
      ),
      { numRuns: 300 },
    );
  }, 180_000);

  it('other methods on the new paths: 405 with their Allow, or a CORS preflight', async () => {
    const paths = fc.oneof(
      nameLike.map((name) => `/api/${segmentOf(name)}/avatar`),
      nameLike.map((name) => `/api/${segmentOf(name)}/vcard`),
      fc.constant('/api/profiles'),
      fc.constant('/.well-known/webfinger'),
    );
    await fc.assert(
      fc.asyncProperty(paths, fc.constantFrom('PUT', 'PATCH', 'DELETE', 'OPTIONS', 'POST'), async (path, method) => {
        if (method === 'POST' && path === '/api/profiles') return;
        const response = await client.send(path, { method, body: method === 'OPTIONS' ? undefined : 'x' });
        const context = `${method} ${path}`;
        if (response.status === 404) {
          // `/api/..` style paths that leave the route altogether are unknown paths.
          expect(jsonError(response, context)).toBe('Not found');
          return;
        }
        expect(response.status, context).toBe(405);
        expect(jsonError(response, context)).toBe('Method not allowed');
        expect(response.headers.allow).toBe(path === '/api/profiles' ? 'GET, HEAD, POST' : 'GET, HEAD');
      }),
      { numRuns: 200 },
    );
  }, 120_000);

  it('leaves the data unchanged', async () => {
    expect(await snapshotDatabase(handle.db)).toEqual(before.snapshot);
    expect(await exportText(handle.db)).toBe(before.export);
  });
});
