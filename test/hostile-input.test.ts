/**
 * Hostile input, property-based (fast-check), on every test database: generated names, e-mails,
 * raw paths, query strings, GraphQL variables, documents and bodies (SQL and script fragments,
 * encoded slashes and NULs, invalid percent-encoding, over-long strings, mixed scripts,
 * right-to-left marks, emoji, `..`, backslashes, lone surrogates) thrown at
 * `GET /api/<raw>`, `GET /api/owner-check` and `/graphql`.
 *
 * Every answer must be one of the contract's statuses with a JSON body of the contract's shape
 * (GraphQL: errors with an expected `extensions.code`, never INTERNAL_SERVER_ERROR), where the
 * input decides the outcome it must be the contract's outcome, and the data must be unchanged
 * afterwards. Limits are set high: this suite tests input handling, not the limiter. A failing
 * property prints fast-check's seed and the shrunk input.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DATA } from '../src/data/demo-data.js';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { emailKey, INVALID_EMAIL_MESSAGE, isValidEmail } from '../src/names/email.js';
import { INVALID_NAME_MESSAGE, parseNameId, parseNamespace } from '../src/names/name-id.js';
import { GRAPHQL_PATH_RERUN, startTestServer, type TestServer } from './support/app-server.js';
import { exportText, snapshotDatabase } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { FRAGMENTS, HOSTILE_LOOKING_DATA, hostileText, nameLike, rawEncode } from './support/hostile-text.js';
import { type RawClient, type RawResponse, rawClient } from './support/raw-http.js';

const MISSING_PARAMETERS = 'Both email and name parameters are required';
const JSON_TYPE = 'application/json; charset=utf-8';
const PROFILE_KEYS = ['name', 'description', 'image', 'attributes', 'records'];
/** find-my-way's maxParamLength (src/http/router.ts): a longer path segment is an unknown path. */
const MAX_PATH_SEGMENT = 2048;

/** Codes a GraphQL error may carry here: the contract's client-side ones and Yoga's request errors. */
const ALLOWED_GRAPHQL_CODES = new Set([
  'BAD_USER_INPUT',
  'RATE_LIMITED',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
]);

const knownEmails = [
  'maker@example.com',
  'owner@example.com',
  'Studio.Admin@example.org',
  'zoe@example.org',
  "o'brien+tables@example.net",
  'robert{drop}@example.net',
];
const emailLike: fc.Arbitrary<string> = fc.oneof(
  fc.emailAddress(),
  hostileText,
  fc.tuple(fc.emailAddress(), fc.constantFrom(...FRAGMENTS)).map(([email, fragment]) => email + fragment),
  fc.tuple(hostileText, fc.domain()).map(([local, domain]) => `${local}@${domain}`),
  fc.constantFrom(...knownEmails, ...knownEmails.map((email) => email.toUpperCase()), `${'a'.repeat(250)}@b.cd`),
);

/** Only GraphQL (JSON) can carry these: strings with unpaired surrogates. */
const withLoneSurrogate: fc.Arbitrary<string> = fc
  .tuple(nameLike, fc.constantFrom('\uD800', '\uDBFF', '\uDC00', '\uDFFF'), fc.nat(3))
  .map(([text, surrogate, at]) => text.slice(0, at) + surrogate + text.slice(at));

/** Who owns or created what, from the seeded data: the oracle of `hasCreated`. */
function ownershipOracle(lines: ReadonlyArray<Record<string, unknown>>): (name: string, email: string) => boolean {
  const owners = new Map<string, string>();
  const creators = new Map<string, string>();
  for (const line of lines) {
    if (line.kind === 'namespace') owners.set(parseNamespace(String(line.name))!, emailKey(String(line.ownerEmail)));
    else creators.set(parseNameId(String(line.name))!.name, emailKey(String(line.creatorEmail)));
  }
  return (name, email) => {
    const parsed = parseNameId(name)!;
    const creator = creators.get(parsed.name);
    return creator !== undefined && (creator === emailKey(email) || owners.get(parsed.domain) === emailKey(email));
  };
}

const hasCreated = ownershipOracle([...DEMO_DATA, ...HOSTILE_LOOKING_DATA] as ReadonlyArray<Record<string, unknown>>);

type Outcome =
  | { status: 200; body: { hasCreated: boolean; email: string; name: string } }
  | { status: 400; body: { error: string } };

/**
 * The contract's owner-check outcome for the values a client sent for `email` and `name` (none,
 * one, or several: a parameter given twice is invalid).
 */
function expectedOwnerCheck(emails: string[], names: string[]): Outcome {
  const single = (values: string[]): string | null =>
    values.length === 0 ? '' : values.length > 1 ? null : values[0]!.trim();
  const email = single(emails);
  const name = single(names);
  if (email === '' || name === '') return { status: 400, body: { error: MISSING_PARAMETERS } };
  if (email === null || !isValidEmail(email)) return { status: 400, body: { error: INVALID_EMAIL_MESSAGE } };
  if (name === null || parseNameId(name) === null) return { status: 400, body: { error: INVALID_NAME_MESSAGE } };
  return { status: 200, body: { hasCreated: hasCreated(name, email), email, name } };
}

/** A REST answer's body, checked to be the contract's JSON for its status. */
function restBody(response: RawResponse, allowed: readonly number[]): unknown {
  const context = `${response.status} ${response.text.slice(0, 300)}`;
  expect(allowed, context).toContain(response.status);
  expect(response.headers['content-type'], context).toBe(JSON_TYPE);
  const body = JSON.parse(response.text) as Record<string, unknown>;
  if (response.status === 200) return body;
  expect(Object.keys(body), context).toEqual(['error']);
  expect(typeof body.error, context).toBe('string');
  return body;
}

interface GraphQLResponseBody {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; path?: unknown[]; extensions?: { code?: unknown } }>;
}

/** A GraphQL answer, checked: 200 or 400, JSON, every error with an allowed code. */
function graphqlBody(response: RawResponse): GraphQLResponseBody {
  const context = `${response.status} ${response.text.slice(0, 400)}`;
  expect([200, 400], context).toContain(response.status);
  expect(response.headers['content-type'], context).toMatch(/^application\/(graphql-response\+)?json/);
  const body = JSON.parse(response.text) as GraphQLResponseBody;
  expect(body.data !== undefined || (body.errors?.length ?? 0) > 0, context).toBe(true);
  for (const error of body.errors ?? []) {
    expect(typeof error.message, context).toBe('string');
    expect(ALLOWED_GRAPHQL_CODES.has(String(error.extensions?.code)), context).toBe(true);
  }
  return body;
}

describe.each(databaseKinds())('hostile input on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let client: RawClient;
  let before: { snapshot: Awaited<ReturnType<typeof snapshotDatabase>>; export: string };

  const graphql = (body: unknown) =>
    client.send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    const report = await importLines(
      handle.db,
      HOSTILE_LOOKING_DATA.map((line) => JSON.stringify(line)),
    );
    expect(report.problems).toEqual([]);
    server = await startTestServer(handle, { OWNER_CHECK_LIMIT: '1000000', PROFILE_LIMIT: '100000000' });
    client = rawClient(server.url);
    before = { snapshot: await snapshotDatabase(handle.db), export: await exportText(handle.db) };
  });
  afterAll(async () => {
    client?.close();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it.skipIf(GRAPHQL_PATH_RERUN)('serves hostile-looking stored text verbatim', async () => {
    const response = await client.send('/api/bobby-tables@sql');
    const body = restBody(response, [200]) as { description: string; image: string; records: unknown };
    const stored = HOSTILE_LOOKING_DATA[1] as { description: string; image: string; records: unknown };
    expect(body.description).toBe(stored.description);
    expect(body.image).toBe(stored.image);
    expect(body.records).toEqual(stored.records);
  });

  it.skipIf(GRAPHQL_PATH_RERUN)(
    'GET /api/<percent-encoded name>: 400 for an invalid name, the profile or 404 for a valid one',
    async () => {
      await fc.assert(
        fc.asyncProperty(nameLike, async (name) => {
          const path = `/api/${encodeURIComponent(name)}`;
          const response = await client.send(path);
          const parsed = parseNameId(name);
          if (name === 'owner-check') {
            // The fixed path of the owner check, here without parameters.
            expect(restBody(response, [400])).toEqual({ error: MISSING_PARAMETERS });
          } else if (name === 'openapi.json') {
            expect(restBody(response, [200])).toHaveProperty('openapi');
          } else if (path.length - '/api/'.length > MAX_PATH_SEGMENT) {
            // Longer than any route parameter: an unknown path (only invalid names get this long, but NFD Hangul).
            expect(restBody(response, [400, 404])).toHaveProperty('error');
          } else if (parsed === null) {
            expect(restBody(response, [400])).toEqual({ error: INVALID_NAME_MESSAGE });
          } else {
            const body = restBody(response, [200, 404]);
            if (response.status === 404) expect(body).toEqual({ error: 'Profile not found' });
            else {
              expect(Object.keys(body as object)).toEqual(PROFILE_KEYS);
              expect((body as { name: string }).name).toBe(parsed.name);
            }
          }
        }),
        { numRuns: 600 },
      );
    },
    120_000,
  );

  it.skipIf(GRAPHQL_PATH_RERUN)(
    'GET and HEAD /api/<raw path>: only the contract statuses, JSON error bodies',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(nameLike, hostileText),
          fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
          async (text, method) => {
            const response = await client.send(`/api/${rawEncode(text)}`, { method });
            if (method === 'HEAD') {
              expect([200, 400, 404]).toContain(response.status);
              expect(response.text).toBe('');
              return;
            }
            const body = restBody(response, [200, 400, 404]);
            if (response.status === 200 && 'hasCreated' in (body as object)) {
              // The raw text reached the owner check (`owner-check?...`): its answer shape.
              expect(Object.keys(body as object)).toEqual(['hasCreated', 'email', 'name']);
            } else if (response.status === 200 && !('openapi' in (body as object))) {
              expect(Object.keys(body as object)).toEqual(PROFILE_KEYS);
            }
          },
        ),
        { numRuns: 600 },
      );
    },
    120_000,
  );

  it.skipIf(GRAPHQL_PATH_RERUN)(
    'other methods on /api/<raw path>: 405 with Allow: GET, HEAD',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          nameLike,
          fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
          async (text, method) => {
            const response = await client.send(`/api/${rawEncode(text)}`, {
              method,
              body: method === 'OPTIONS' ? undefined : text,
            });
            if (response.status === 404) {
              // `/api/..` style paths that leave /api/ altogether are unknown paths.
              expect(restBody(response, [404])).toEqual({ error: 'Not found' });
              return;
            }
            expect(restBody(response, [405])).toEqual({ error: 'Method not allowed' });
            expect(response.headers.allow).toBe('GET, HEAD');
          },
        ),
        { numRuns: 150 },
      );
    },
    60_000,
  );

  it.skipIf(GRAPHQL_PATH_RERUN)(
    'GET /api/owner-check with encoded parameters: the contract answer for every input',
    async () => {
      const values = fc.array(emailLike, { maxLength: 2 });
      const nameValues = fc.array(nameLike, { maxLength: 2 });
      // Mostly exactly one value each; sometimes none or two.
      const oneOrMore = <T>(single: fc.Arbitrary<T>, many: fc.Arbitrary<T[]>) =>
        fc.oneof({ weight: 5, arbitrary: single.map((value) => [value]) }, { weight: 1, arbitrary: many });
      await fc.assert(
        fc.asyncProperty(oneOrMore(emailLike, values), oneOrMore(nameLike, nameValues), async (emails, names) => {
          const query = [
            ...emails.map((email) => `email=${encodeURIComponent(email)}`),
            ...names.map((name) => `name=${encodeURIComponent(name)}`),
          ].join('&');
          const response = await client.send(`/api/owner-check?${query}`);
          const expected = expectedOwnerCheck(emails, names);
          expect(restBody(response, [expected.status]), query).toEqual(expected.body);
          expect(response.headers['cache-control']).toBe('no-store');
        }),
        { numRuns: 600 },
      );
    },
    120_000,
  );

  it.skipIf(GRAPHQL_PATH_RERUN)(
    'GET /api/owner-check with raw query strings: only the contract statuses, JSON bodies',
    async () => {
      await fc.assert(
        fc.asyncProperty(emailLike, nameLike, hostileText, async (email, name, junk) => {
          const response = await client.send(
            `/api/owner-check?email=${rawEncode(email)}&name=${rawEncode(name)}&${rawEncode(junk)}`,
          );
          const body = restBody(response, [200, 400]);
          if (response.status === 200) expect(Object.keys(body as object)).toEqual(['hasCreated', 'email', 'name']);
          else
            expect([MISSING_PARAMETERS, INVALID_EMAIL_MESSAGE, INVALID_NAME_MESSAGE]).toContain(
              (body as { error: string }).error,
            );
        }),
        { numRuns: 300 },
      );
    },
    60_000,
  );

  it('GraphQL profile, profiles and ownerCheck with hostile variables: the contract answer for every input', async () => {
    const graphqlName = fc.oneof({ weight: 5, arbitrary: nameLike }, { weight: 1, arbitrary: withLoneSurrogate });
    const request = fc.oneof(
      graphqlName.map((name) => ({ field: 'profile' as const, name })),
      fc.array(graphqlName, { maxLength: 8 }).map((names) => ({ field: 'profiles' as const, names })),
      fc
        .array(fc.constantFrom('demo@me', 'nobody@me'), { minLength: 101, maxLength: 103 })
        .map((names) => ({ field: 'profiles' as const, names })),
      fc
        .tuple(fc.option(fc.oneof(emailLike, withLoneSurrogate)), fc.option(graphqlName))
        .map(([email, name]) => ({ field: 'ownerCheck' as const, email, name })),
    );
    await fc.assert(
      fc.asyncProperty(request, async (asked) => {
        if (asked.field === 'profile') {
          const body = graphqlBody(
            await graphql({
              query: 'query ($name: String!) { profile(name: $name) { name description } }',
              variables: { name: asked.name },
            }),
          );
          const parsed = parseNameId(asked.name);
          if (parsed === null) {
            expect(body.errors?.map((error) => [error.message, error.extensions?.code])).toEqual([
              [INVALID_NAME_MESSAGE, 'BAD_USER_INPUT'],
            ]);
            expect(body.data).toEqual({ profile: null });
          } else {
            expect(body.errors).toBeUndefined();
            const profile = body.data?.profile as { name: string } | null;
            if (profile !== null) expect(profile.name).toBe(parsed.name);
          }
        } else if (asked.field === 'profiles') {
          const body = graphqlBody(
            await graphql({
              query: 'query ($names: [String!]!) { profiles(names: $names) { name } }',
              variables: { names: asked.names },
            }),
          );
          const invalid = asked.names.some((name) => parseNameId(name) === null);
          if (asked.names.length > 100 || invalid) {
            expect(body.errors?.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
            expect(body.data).toBeNull();
          } else {
            expect(body.errors).toBeUndefined();
            const profiles = body.data?.profiles as Array<{ name: string } | null>;
            expect(profiles).toHaveLength(asked.names.length);
            profiles.forEach((profile, index) => {
              if (profile !== null) expect(profile.name).toBe(parseNameId(asked.names[index]!)!.name);
            });
          }
        } else {
          const body = graphqlBody(
            await graphql({
              query:
                'query ($email: String, $name: String) { ownerCheck(email: $email, name: $name) { hasCreated email name } }',
              variables: { email: asked.email, name: asked.name },
            }),
          );
          const expected = expectedOwnerCheck(
            asked.email === null ? [] : [asked.email],
            asked.name === null ? [] : [asked.name],
          );
          if (expected.status === 200) {
            expect(body).toEqual({ data: { ownerCheck: expected.body } });
          } else {
            expect(body.errors?.map((error) => [error.message, error.extensions?.code])).toEqual([
              [expected.body.error, 'BAD_USER_INPUT'],
            ]);
            expect(body.data).toEqual({ ownerCheck: null });
          }
        }
      }),
      { numRuns: 700 },
    );
  }, 120_000);

  it('GraphQL hostile documents and bodies: 200 or 400 with coded errors, never a server error', async () => {
    const token = fc.oneof(
      fc.constantFrom(
        ...[
          '{',
          '}',
          '(',
          ')',
          '[',
          ']',
          ':',
          ',',
          '...',
          '$',
          '@',
          '!',
          '=',
          '|',
          '&',
          'query',
          'mutation',
          'subscription',
          'fragment',
          'on',
        ],
        ...[
          'profile',
          'profiles',
          'ownerCheck',
          'record',
          'name',
          'names',
          'email',
          'type',
          'records',
          'key',
          'raw',
          'value',
          'entries',
        ],
        ...[
          'attributes',
          'traitType',
          '__typename',
          '__schema',
          '__type',
          'types',
          'fields',
          'include',
          'skip',
          'if',
          'true',
          'false',
        ],
        ...[
          'null',
          '1',
          '-1.5e308',
          '"demo@me"',
          '"""block"""',
          '#comment\n',
          '\n',
          'a:',
          'b:',
          '$name',
          'String',
          'String!',
          '[String!]!',
        ],
        ...['"\\u0000"', '"\\ud800"', '"\\', '\u202E', '😀', 'é'],
      ),
      // String literals; short, so that a document stays far below the request body limit.
      fc
        .oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: 'binary', maxLength: 10 }))
        .map((text) => JSON.stringify(text)),
    );
    const tokenSoup = fc.array(token, { maxLength: 30 }).map((tokens) => tokens.join(' '));
    const wellFormed = fc
      .tuple(
        fc.constantFrom(
          'profile(name: %s) { name }',
          'profiles(names: [%s, %s]) { name }',
          'ownerCheck(email: %s, name: %s) { hasCreated }',
          'record(type: %s) { key }',
        ),
        nameLike,
        emailLike,
      )
      .map(
        ([field, first, second]) =>
          `{ ${field.replace('%s', JSON.stringify(first)).replace('%s', JSON.stringify(second))} }`,
      );
    const document = fc.oneof(tokenSoup, wellFormed);
    const jsonBody = fc.record(
      {
        query: fc.oneof({ weight: 4, arbitrary: document }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }),
        variables: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.dictionary(fc.constantFrom('name', 'names', 'email'), fc.jsonValue({ maxDepth: 2 })),
        ),
        operationName: fc.oneof(fc.constant(null), fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 })),
      },
      { requiredKeys: ['query'] },
    );
    const exchange = fc.oneof(
      { weight: 4, arbitrary: jsonBody.map((body) => ({ method: 'POST' as const, body: JSON.stringify(body) })) },
      { weight: 1, arbitrary: hostileText.map((body) => ({ method: 'POST' as const, body })) },
      { weight: 2, arbitrary: document.map((query) => ({ method: 'GET' as const, query: rawEncode(query) })) },
    );
    await fc.assert(
      fc.asyncProperty(exchange, async (sent) => {
        const response =
          sent.method === 'POST'
            ? await graphql(sent.body)
            : await client.send(`/graphql?query=${sent.query}`, {
                headers: { accept: 'application/graphql-response+json' },
              });
        graphqlBody(response);
      }),
      { numRuns: 500 },
    );
  }, 120_000);

  it.skipIf(GRAPHQL_PATH_RERUN)(
    'refuses bytes outside printable ASCII in the request line with 400 at the HTTP parser, and keeps serving',
    async () => {
      for (const path of [
        '/api/d\u00e9mo@me',
        '/api/\u00ff@me',
        '/api/a\u007fb@me',
        '/api/owner-check?email=\u00e9@x.y&name=demo@me',
      ]) {
        const response = await client.send(path);
        expect(response.status, path).toBe(400);
      }
      expect((await client.send('/api/demo@me')).status).toBe(200);
    },
  );

  it('leaves the data unchanged', async () => {
    expect(await snapshotDatabase(handle.db)).toEqual(before.snapshot);
    expect(await exportText(handle.db)).toBe(before.export);
  });
});
