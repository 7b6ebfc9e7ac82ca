/**
 * The answer to a GraphQL-over-HTTP request must not depend on which path served it: the
 * service's HTTP layer (src/graphql/transport/over-http.ts) or Yoga's own handler. Two servers on one
 * database, one per path, get the same generated requests — valid, invalid and hostile, GET and
 * POST, every kind of Accept and Content-Type, persisted queries, conditional GETs, names inline
 * and in variables — in the same order, so their rate-limit budgets and caches stay in step; the
 * status, the headers that matter and the body must be the same.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/database.js';
import { jsonMediaTypeFor, mayStream } from '../src/graphql/transport/accept.js';
import { HAND_OVER_MESSAGE } from '../src/graphql/transport/over-http.js';
import { MAX_REQUEST_BODY_BYTES } from '../src/graphql/transport/request-body-limit.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { bulkName, insertGraphQLFixtures, PRIVATE_EMAILS } from './support/graphql-fixtures.js';
import { captureLog } from './support/log-capture.js';

/** Headers whose values a client acts on; X-Request-Id and Date differ by nature. */
const COMPARED_HEADERS = [
  'content-type',
  'cache-control',
  'etag',
  'vary',
  'retry-after',
  'allow',
  'accept',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'ratelimit-limit',
  'ratelimit-remaining',
] as const;

const NAMES = ['demo@me', 'Demo@ME', 'empty@me', 'nobody@me', 'not a name', '', bulkName(3), 'dеmo@me'];

const SELECTIONS = [
  'name',
  'name description image level',
  '__typename name records { key type raw }',
  'attributes { traitType value { __typename ... on StringAttributeValue { value } ... on IntAttributeValue { value } } }',
  'records { __typename ... on SocialRecord { entries { key value } twitter } ... on PhoneRecord { numbers } }',
  'wallets { symbol chain accountId } avatarUrl(size: 64)',
];

const name = fc.constantFrom(...NAMES);
const selection = fc.constantFrom(...SELECTIONS);

/** Documents: names inline and in variables, several operations, errors of every stage. */
const document: fc.Arbitrary<{ query: string; variables?: Record<string, unknown>; operationName?: string }> = fc.oneof(
  fc.tuple(name, selection).map(([n, s]) => ({ query: `{ profile(name: ${JSON.stringify(n)}) { ${s} } }` })),
  fc.tuple(name, selection).map(([n, s]) => ({
    query: `query P($n: String!) { profile(name: $n) { ${s} } }`,
    variables: { n },
  })),
  fc.tuple(fc.array(name, { maxLength: 4 }), selection).map(([names, s]) => ({
    query: `{ profiles(names: ${JSON.stringify(names)}) { ${s} } }`,
  })),
  fc.tuple(name, name).map(([a, b]) => ({
    query: `{ a: profile(name: ${JSON.stringify(a)}) { name } b: profile(name: ${JSON.stringify(b)}) { level } }`,
  })),
  fc.constantFrom(
    { query: '{ __typename }' },
    { query: '{ profile(name: "demo@me") { nam } }' },
    { query: '{ profile(name: "demo@me") { name }' },
    { query: 'mutation { __typename }' },
    { query: 'subscription { __typename }' },
    { query: 'query A { __typename } query B { profile(name: "demo@me") { name } }' },
    { query: 'query A { __typename } query B { profile(name: "demo@me") { name } }', operationName: 'B' },
    { query: 'query A { __typename }', operationName: 'Z' },
    { query: 'query P($n: String!) { profile(name: $n) { name } }' },
    { query: 'query P($n: String!) { profile(name: $n) { name } }', variables: { n: 7 } },
    { query: '{ searchProfiles(prefix: "de", first: 2) { edges { cursor node { name } } pageInfo { hasNextPage } } }' },
    { query: '{ nameCheck(name: "dеmo@me") { canonical valid reason exists warnings } }' },
    { query: `{ ownerCheck(email: "${PRIVATE_EMAILS.meOwner}", name: "demo@me") { hasCreated } }` },
    { query: '{ ownerCheck(email: "nope", name: "demo@me") { hasCreated } }' },
    { query: `{ ${Array.from({ length: 70 }, (_, i) => `a${i}: __typename`).join(' ')} }` },
  ),
);

const ACCEPTS = [
  undefined,
  '*/*',
  'application/json',
  'application/graphql-response+json',
  'application/graphql-response+json, application/json;q=0.9',
  'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed',
  'application/json; charset=iso-8859-1',
  'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'text/event-stream',
  'multipart/mixed',
  'application/xml',
  'application/*',
  ', ,',
];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/graphql+json',
  'application/x-www-form-urlencoded',
  'text/plain',
  undefined,
];

interface GeneratedRequest {
  method: 'GET' | 'POST';
  accept: string | undefined;
  contentType: string | undefined;
  /** Query string (GET) or body (POST). */
  payload: string;
  ifNoneMatch?: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

type Params = { query?: string; variables?: unknown; operationName?: string; extensions?: unknown };

/** GraphQL parameters, and the ways clients and attackers get them wrong. */
const params: fc.Arbitrary<Params | unknown> = fc.oneof(
  { weight: 6, arbitrary: document },
  document.map(({ query }) => ({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } } })),
  document.map(({ query }) => ({ query, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } } })),
  document.map(({ query }) => ({ query, extensions: { persistedQuery: { version: 1, sha256Hash: 'f00' } } })),
  fc.constantFrom<unknown>(
    null,
    [],
    [{ query: '{ __typename }' }],
    'query',
    7,
    {},
    { query: 7 },
    { query: '{ __typename }', variables: 'x' },
    { query: '{ __typename }', variables: [] },
    { query: '{ __typename }', extensions: 'x' },
    { query: '{ __typename }', operationName: 7 },
    { query: '{ __typename }', other: 1 },
    { query: '{ __typename }', other: null },
    { extensions: { persistedQuery: { version: 2, sha256Hash: 'x' } } },
  ),
);

function queryString(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `query=${encodeURIComponent(String(value))}`;
  return Object.entries(value)
    .map(([key, entry]) => `${key}=${encodeURIComponent(typeof entry === 'string' ? entry : JSON.stringify(entry))}`)
    .join('&');
}

const generatedRequest: fc.Arbitrary<GeneratedRequest> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      method: fc.constant('GET' as const),
      accept: fc.constantFrom(...ACCEPTS),
      contentType: fc.constant(undefined),
      payload: fc.oneof(
        { weight: 8, arbitrary: params.map(queryString) },
        fc.constantFrom('query={__typename}&variables={', 'query={__typename}&extensions=[', '', 'variables={}'),
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      method: fc.constant('POST' as const),
      accept: fc.constantFrom(...ACCEPTS),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      payload: fc.oneof(
        { weight: 8, arbitrary: params.map((value) => JSON.stringify(value)) },
        fc.constantFrom('{', '', ' ', '\ufeff{"query":"{ __typename }"}', '{"query":"{ __typename }"}{}', 'null'),
      ),
    }),
  },
);

interface Observed {
  status: number;
  headers: Record<string, string | null>;
  body: string;
}

async function send(base: string, request: GeneratedRequest): Promise<Observed> {
  const headers: Record<string, string> = {};
  if (request.accept !== undefined) headers.accept = request.accept;
  if (request.contentType !== undefined) headers['content-type'] = request.contentType;
  if (request.ifNoneMatch !== undefined) headers['if-none-match'] = request.ifNoneMatch;
  const response =
    request.method === 'GET'
      ? await fetch(`${base}/graphql?${request.payload}`, { headers })
      : await fetch(`${base}/graphql`, { method: 'POST', headers, body: request.payload });
  return {
    status: response.status,
    headers: Object.fromEntries(COMPARED_HEADERS.map((header) => [header, response.headers.get(header)])),
    body: await response.text(),
  };
}

describe.each(databaseKinds())('the same answer from both GraphQL HTTP paths, on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let service: TestServer;
  let yoga: TestServer;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await insertGraphQLFixtures(handle.db);
    // Budgets small enough that the sequence runs into them: RATE_LIMITED must match too.
    const env = { OWNER_CHECK_LIMIT: '5', PROFILE_LIMIT: '400', PROFILE_CACHE_SIZE: '0' };
    service = await startTestServer(handle, env, undefined, { graphqlHttpPath: 'service' });
    yoga = await startTestServer(handle, env, undefined, { graphqlHttpPath: 'yoga' });
  });
  afterAll(async () => {
    await service?.close();
    await yoga?.close();
    await handle?.close();
    await testDb?.drop();
  });

  async function expectSameAnswer(request: GeneratedRequest): Promise<Observed> {
    const fromService = await send(service.url, request);
    const fromYoga = await send(yoga.url, request);
    expect(fromService, JSON.stringify(request)).toEqual(fromYoga);
    return fromService;
  }

  it('answers generated requests identically, in status, headers and body', async () => {
    await fc.assert(
      fc.asyncProperty(generatedRequest, async (request) => {
        const first = await expectSameAnswer(request);
        // A conditional repeat of every cacheable answer: a 304 on both, or the same 200.
        const etag = first.headers.etag;
        if (etag !== null) await expectSameAnswer({ ...request, ifNoneMatch: etag });
      }),
      { numRuns: 400, seed: 20261126 },
    );
  });

  it('answers bodies over the limit alike, declared or chunked', async () => {
    const body = JSON.stringify({ query: `{ __typename }${' '.repeat(MAX_REQUEST_BODY_BYTES)}` });
    const declared = await expectSameAnswer({
      method: 'POST',
      accept: 'application/json',
      contentType: 'application/json',
      payload: body,
    });
    expect(declared.status).toBe(413);
    const chunked = async (base: string) => {
      const bytes = new TextEncoder().encode(body);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 8192) controller.enqueue(bytes.slice(at, at + 8192));
          controller.close();
        },
      });
      const response = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      return { status: response.status, body: await response.text() };
    };
    expect(await chunked(service.url)).toEqual(await chunked(yoga.url));
  });

  it('goes through the persisted-query flow alike: miss, registration, hit', async () => {
    const query = `{ profile(name: "demo@me") { name level } }`;
    const persisted = { version: 1, sha256Hash: sha256(query) };
    const hashOnly = `extensions=${encodeURIComponent(JSON.stringify({ persistedQuery: persisted }))}`;
    const get = (payload: string): GeneratedRequest => ({
      method: 'GET',
      accept: 'application/graphql-response+json',
      contentType: undefined,
      payload,
    });
    const miss = await expectSameAnswer(get(hashOnly));
    expect(miss.status).toBe(404);
    expect(miss.body).toContain('PERSISTED_QUERY_NOT_FOUND');
    const registered = await expectSameAnswer(get(`query=${encodeURIComponent(query)}&${hashOnly}`));
    expect(JSON.parse(registered.body)).toEqual({ data: { profile: { name: 'demo@me', level: 2 } } });
    const hit = await expectSameAnswer(get(hashOnly));
    expect(JSON.parse(hit.body)).toEqual({ data: { profile: { name: 'demo@me', level: 2 } } });
    expect(hit.headers.etag).not.toBeNull();
  });
});

describe('which path answers', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  const log = captureLog('debug');

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await insertGraphQLFixtures(handle.db);
    server = await startTestServer(handle, {}, log.logger, { graphqlHttpPath: 'service' });
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  const query = encodeURIComponent('{ profile(name: "demo@me") { name } }');
  const body = JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' });
  const hashOnly = encodeURIComponent(JSON.stringify({ persistedQuery: { version: 1, sha256Hash: sha256('{ x }') } }));
  const json = 'application/json';

  it.each<[string, GeneratedRequest, string | undefined]>([
    ['POST JSON', { method: 'POST', accept: undefined, contentType: json, payload: body }, undefined],
    [
      'GET',
      { method: 'GET', accept: 'application/graphql-response+json', contentType: undefined, payload: `query=${query}` },
      undefined,
    ],
    [
      "Apollo's Accept",
      {
        method: 'GET',
        accept: 'application/graphql-response+json,application/json;q=0.9',
        contentType: undefined,
        payload: `query=${query}`,
      },
      undefined,
    ],
    ["urql's Accept", { method: 'POST', accept: ACCEPTS[5], contentType: json, payload: body }, undefined],
    [
      'a validation error',
      { method: 'POST', accept: json, contentType: json, payload: JSON.stringify({ query: '{ nope }' }) },
      undefined,
    ],
    ['GraphiQL', { method: 'GET', accept: 'text/html', contentType: undefined, payload: '' }, 'media type'],
    [
      'a form body',
      { method: 'POST', accept: json, contentType: 'application/x-www-form-urlencoded', payload: `query=${query}` },
      'media type',
    ],
    [
      'server-sent events',
      { method: 'POST', accept: 'text/event-stream', contentType: json, payload: body },
      'media type',
    ],
    ['a batch', { method: 'POST', accept: json, contentType: json, payload: `[${body}]` }, 'parameters'],
    [
      'broken variables',
      { method: 'GET', accept: json, contentType: undefined, payload: `query=${query}&variables={` },
      'parameters',
    ],
    [
      'a subscription that may stream',
      { method: 'POST', accept: '*/*', contentType: json, payload: JSON.stringify({ query: 'subscription { x }' }) },
      'may stream',
    ],
    [
      'an unknown persisted query',
      { method: 'GET', accept: json, contentType: undefined, payload: `extensions=${hashOnly}` },
      'refused before execution',
    ],
  ])('%s', async (_label, request, reason) => {
    log.lines.length = 0;
    await send(server.url, request);
    expect(log.find('debug', HAND_OVER_MESSAGE).map((line) => line.reason)).toEqual(
      reason === undefined ? [] : [reason],
    );
  });

  it('answers a query that ran here once, whose text has the word subscription, also where Accept admits a stream', async () => {
    const named = JSON.stringify({ query: '{ subscription: profile(name: "demo@me") { name } }' });
    const asked = (accept: string) => ({ method: 'POST' as const, accept, contentType: json, payload: named });
    log.lines.length = 0;
    // Not yet prepared: its answer might stream, so Yoga's handler answers.
    await send(server.url, asked('*/*'));
    await send(server.url, asked(json));
    const answered = await send(server.url, asked('*/*'));
    expect(answered.body).toContain('"subscription":{"name":"demo@me"}');
    expect(log.find('debug', HAND_OVER_MESSAGE).map((line) => line.reason)).toEqual(['may stream']);
  });
});

describe("reading Accept as Yoga's result processors do", () => {
  it.each([
    [undefined, 'application/json'],
    ['*/*', 'application/json'],
    ['application/graphql-response+json', 'application/graphql-response+json'],
    ['application/graphql-response+json, application/json;q=0.9', 'application/graphql-response+json'],
    ['application/json, application/graphql-response+json', 'application/json'],
    ['text/event-stream, application/*', 'application/json'],
    ['application/json; charset=iso-8859-1', undefined],
    ['text/event-stream', undefined],
    ['application/xml', undefined],
  ])('answers %s with %s', (accept, expected) => {
    expect(jsonMediaTypeFor('POST', accept)).toBe(expected);
  });

  it('leaves a browser page request to GraphiQL', () => {
    expect(jsonMediaTypeFor('GET', 'text/html,*/*;q=0.8')).toBeUndefined();
    expect(jsonMediaTypeFor('POST', 'text/html,*/*;q=0.8')).toBe('application/json');
  });

  it('knows which clients accept a stream', () => {
    expect(mayStream(undefined)).toBe(true);
    expect(mayStream('application/graphql-response+json, application/json;q=0.9')).toBe(false);
    expect(mayStream('application/json, text/event-stream')).toBe(true);
    expect(mayStream('multipart/*')).toBe(true);
  });
});

/**
 * Plugins whose hooks answer with promises, which the service's path must wait for as Yoga does:
 * an `onExecute` hook and its `onExecuteDone` (the execute stage of prepared operations,
 * src/graphql/execution/execute-hooks.ts) and an `onResultProcess` hook (the transport's result
 * writer), each acting after a turn of the event loop.
 */
function slowPlugins(): Plugin[] {
  const later = () => new Promise((resolve) => setImmediate(resolve));
  return [
    {
      onExecute: async ({ extendContext }) => {
        await later();
        extendContext({ slow: true } as never);
        return {
          onExecuteDone: async ({ result, setResult }) => {
            await later();
            const single = result as { errors?: unknown; extensions?: Record<string, unknown> };
            if (single.errors === undefined)
              setResult({ ...single, extensions: { ...single.extensions, slow: 'executed' } } as never);
          },
        };
      },
      onResultProcess: async ({ result }) => {
        await later();
        if (Array.isArray(result) || Symbol.asyncIterator in result) return;
        result.extensions = { ...result.extensions, http: { headers: { 'X-Slow': 'processed' } } };
      },
    },
  ];
}

describe('hooks that answer with promises, on both paths', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  const servers: Record<'service' | 'yoga', TestServer | undefined> = { service: undefined, yoga: undefined };

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await insertGraphQLFixtures(handle.db);
    for (const path of ['service', 'yoga'] as const) {
      servers[path] = await startTestServer(handle, {}, undefined, {
        graphqlHttpPath: path,
        graphql: { plugins: slowPlugins() },
      });
    }
  });
  afterAll(async () => {
    await servers.service?.close();
    await servers.yoga?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('waits for each, prepared or not, and answers as Yoga does', async () => {
    const request = (path: 'service' | 'yoga') =>
      fetch(`${servers[path]?.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'query S($n: String!) { profile(name: $n) { name } }',
          variables: { n: 'demo@me' },
        }),
      });
    // Enough repeats for the document to be cached, prepared and compiled on the service's path.
    for (let i = 0; i < 20; i += 1) {
      const [fromService, fromYoga] = await Promise.all([request('service'), request('yoga')]);
      const answer = {
        status: fromService.status,
        slow: fromService.headers.get('x-slow'),
        body: await fromService.text(),
      };
      expect(answer).toEqual({
        status: fromYoga.status,
        slow: fromYoga.headers.get('x-slow'),
        body: await fromYoga.text(),
      });
      expect(answer).toEqual({
        status: 200,
        slow: 'processed',
        body: JSON.stringify({ data: { profile: { name: 'demo@me' } }, extensions: { slow: 'executed' } }),
      });
    }
    expect(
      servers.service?.app.graphql.prepared.find({ query: 'query S($n: String!) { profile(name: $n) { name } }' }),
    ).toBeDefined();
  });
});
