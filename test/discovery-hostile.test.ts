/**
 * Hostile input to discovery, property-based (fast-check), on every test database: generated
 * prefixes, namespaces, page sizes, cursors (made up, altered, or from other queries) and wallet
 * addresses, sent raw to `GET /api/search` and `GET /api/wallet/{address}` and as GraphQL
 * variables. No input may get a 5xx: every REST answer is 200 with the page shape or a 400 (404
 * for a path no route takes) with an `{"error"}` body; GraphQL answers data or BAD_USER_INPUT.
 * A failing property prints fast-check's seed and the shrunk input.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { mixedText } from './support/hostile-text.js';
import { type RawClient, type RawResponse, rawClient } from './support/raw-http.js';

const FRAGMENTS = [
  "' OR 1=1 --",
  '%',
  '%00',
  '%zz',
  '%C0%AF',
  '%ED%A0%80',
  '%F4%90%80%80',
  '%FF',
  '%2F',
  '%2525',
  '\u0000',
  '\u202E',
  '\u200B',
  '😀',
  'Ω',
  'мир',
  'ﬁ',
  'Ａ',
  'e\u0301',
  'İ',
  '@',
  '&',
  '=',
  '+',
  '#',
  '?',
  '/',
  '..',
  ' ',
  'de',
  'me',
  '0x',
  '0xDE',
  'bc1q',
  '-',
  '_',
  '.',
  'a'.repeat(63),
  'b'.repeat(64),
  'x'.repeat(300),
];

const hostileText = mixedText(FRAGMENTS, { maxParts: 8 });

/** UTF-8 percent-encoding of the characters `pattern` matches (a lone surrogate goes as U+FFFD). */
const percentEncode = (text: string, pattern: RegExp) =>
  text.replace(pattern, (char) => Buffer.from(char).toString('hex').replace(/../g, '%$&'));

/**
 * In a URL: percent-encoded like encodeURIComponent most of the time; otherwise as it is, with
 * only what cannot go on the request line at all encoded, so `%zz`, `&`, `=` and `+` arrive raw.
 */
const inUrl = (text: fc.Arbitrary<string>) =>
  fc
    .tuple(text, fc.boolean())
    .map(([value, encode]) =>
      encode ? percentEncode(value, /[^A-Za-z0-9\-_.!~*'()]/gu) : percentEncode(value, /[^\x21-\x7e]|#/gu),
    );

const pageSize = fc.oneof(
  fc.integer({ min: -5, max: 200 }).map(String),
  fc.constantFrom('', '1.5', '1e2', '0x10', ' 3', '+3', '99999999999999999999', 'NaN'),
  hostileText,
);

/** A query string of the parameters that are present. */
const queryString = (parameters: Record<string, string | null>) =>
  Object.entries(parameters)
    .flatMap(([key, value]) => (value === null ? [] : [`${key}=${value}`]))
    .join('&');

/** Mostly a valid page size, else anything; absent half of the time. */
const limitParameter = fc.option(
  inUrl(
    fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 1, max: 100 }).map(String) },
      { weight: 1, arbitrary: pageSize },
    ),
  ),
  { freq: 2 },
);

interface Listing {
  names: string[];
  nextCursor: string | null;
}

describe.each(databaseKinds())('hostile input to discovery on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let client: RawClient;
  /** Real cursors of several queries, to be used with the wrong query or altered. */
  const realCursors: string[] = [];

  const realCursor = fc.nat().map((index) => realCursors[index % realCursors.length] ?? '');
  const cursor = fc.oneof(
    hostileText,
    realCursor,
    fc
      .tuple(realCursor, fc.nat(), fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }))
      .map(([real, at, char]) => real.slice(0, at % real.length) + char + real.slice((at % real.length) + 1)),
  );

  function expectSafe(response: RawResponse, what: string): void {
    expect(response.status, what).toBeLessThan(500);
    expect([200, 400, 404], `${what}: ${response.text}`).toContain(response.status);
    expect(response.headers['content-type'], what).toBe('application/json; charset=utf-8');
    const body = JSON.parse(response.text) as Record<string, unknown>;
    if (response.status === 200) {
      expect(Array.isArray(body.names), what).toBe(true);
      expect(body.nextCursor === null || typeof body.nextCursor === 'string', what).toBe(true);
    } else {
      expect(Object.keys(body), what).toEqual(['error']);
    }
  }

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    server = await startTestServer(handle, { PROFILE_LIMIT: '0' });
    client = rawClient(server.url);
    for (const path of [
      '/api/search?prefix=d&limit=1',
      '/api/search?prefix=a&limit=1',
      '/api/search?prefix=%D0%B0&namespace=%D0%BC%D0%B8%D1%80&limit=1',
      '/api/wallet/0x00000000000000000000000000000000000a1150?limit=1',
    ]) {
      const page = JSON.parse((await client.send(path)).text) as Listing;
      realCursors.push(Buffer.from(`n1\nx\n${page.names[0] ?? 'demo@me'}`).toString('base64url'));
      if (page.nextCursor !== null) realCursors.push(page.nextCursor);
    }
    // demo@me has the only "d" names: page 1 of "d" ends without a cursor; take one of page size 1 anyway.
    const search = JSON.parse((await client.send('/api/search?prefix=a&limit=1')).text) as Listing;
    if (search.nextCursor !== null) realCursors.push(search.nextCursor);
  });
  afterAll(async () => {
    client?.close();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  // Parameters that are valid most of the time, so that hostile ones reach the database too.
  it('never answers the search with a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          prefix: fc.option(inUrl(fc.oneof(fc.constantFrom('d', 'De', 'a', 'ал', 'は'), hostileText)), { freq: 8 }),
          namespace: fc.option(inUrl(fc.oneof(fc.constantFrom('me', 'studio', 'мир'), hostileText)), { freq: 2 }),
          limit: limitParameter,
          cursor: fc.option(inUrl(cursor), { freq: 2 }),
        }),
        async (parameters) => {
          const path = `/api/search?${queryString(parameters)}`;
          expectSafe(await client.send(path), path);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never answers the reverse lookup with a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        inUrl(hostileText),
        fc.record({ limit: limitParameter, cursor: fc.option(inUrl(cursor), { freq: 2 }) }),
        async (address, parameters) => {
          const path = `/api/wallet/${address}?${queryString(parameters)}`;
          expectSafe(await client.send(path), path);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never fails a GraphQL discovery field other than as BAD_USER_INPUT', async () => {
    const document = `query D($prefix: String!, $namespace: String, $first: Int, $after: String, $address: String!, $name: String!) {
      searchProfiles(prefix: $prefix, namespace: $namespace, first: $first, after: $after) { edges { cursor node { name } } pageInfo { hasNextPage endCursor } }
      profilesByWallet(address: $address, first: $first, after: $after) { edges { cursor node { name wallets { chain } } } }
      nameCheck(name: $name) { canonical valid reason exists warnings }
    }`;
    await fc.assert(
      fc.asyncProperty(
        hostileText,
        fc.option(hostileText),
        fc.option(fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: -3, max: 150 })), { freq: 2 }),
        fc.option(cursor, { freq: 2 }),
        hostileText,
        hostileText,
        async (prefix, namespace, first, after, address, name) => {
          const variables = { prefix, namespace, first, after, address, name };
          const response = await client.send('/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ query: document, variables }),
          });
          const what = JSON.stringify(variables);
          expect(response.status, what).toBe(200);
          const body = JSON.parse(response.text) as { errors?: Array<{ extensions?: { code?: string } }> };
          for (const error of body.errors ?? []) expect(error.extensions?.code, what).toBe('BAD_USER_INPUT');
        },
      ),
      { numRuns: 300 },
    );
  });
});
