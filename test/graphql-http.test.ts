/**
 * `/graphql` over a real socket, in the app as `npm start` builds it, on every database kind:
 * GraphQL over HTTP (GET, POST, media types, the graphql-http audit suite), GraphiQL, CORS,
 * request ids and the owner-check budget of the client's address.
 */
import { createHash } from 'node:crypto';
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/database.js';
import { GRAPHIQL_EXAMPLE_QUERY } from '../src/graphql/graphiql/graphiql-example.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { errorCodes, postGraphQL } from './support/graphql-client.js';
import { insertGraphQLFixtures, PRIVATE_EMAILS } from './support/graphql-fixtures.js';
import { corsPreflight } from './support/raw-http.js';

const OWNER_CHECK_LIMIT = 3;

describe.each(databaseKinds())('/graphql over HTTP on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let endpoint: string;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await insertGraphQLFixtures(handle.db);
    server = await startTestServer(handle, { OWNER_CHECK_LIMIT: String(OWNER_CHECK_LIMIT) });
    endpoint = `${server.url}/graphql`;
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('passes every audit of the GraphQL-over-HTTP spec (graphql-http), MAY ones included, without a warning', async () => {
    const results = [];
    for (const audit of serverAudits({ url: endpoint, fetchFn: fetch })) results.push(await audit.fn());
    expect(results.length).toBeGreaterThan(30);
    const failed = results
      .filter((result) => result.status !== 'ok')
      .map((result) => `${result.name}: ${'reason' in result ? result.reason : ''}`);
    expect(failed).toEqual([]);
  });

  it('answers POST with application/graphql-response+json', async () => {
    const answer = await postGraphQL(
      fetch,
      endpoint,
      `query ($name: String!) {
      profile(name: $name) { name attributes { traitType } records { __typename key ... on PhoneRecord { numbers } } }
    }`,
      { name: 'DEMO@me' },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
    expect(answer.body.errors).toBeUndefined();
    const profile = answer.body.data?.profile as {
      name: string;
      records: Array<{ __typename: string; numbers?: string[] }>;
    };
    expect(profile.name).toBe('demo@me');
    expect(profile.records.map((record) => record.__typename)).toEqual([
      'TextRecord',
      'TextRecord',
      'TextRecord',
      'PhoneRecord',
      'TextRecord',
      'SocialRecord',
      'MapRecord',
      'CryptoRecord',
      'MapRecord',
      'MapRecord',
      'TextRecord',
      'TextRecord',
    ]);
    expect(profile.records[3]?.numbers).toEqual(['+15550100', '+15550111']);
  });

  it('answers GET with the query in the URL, and plain JSON to clients that ask for it', async () => {
    const url = new URL(endpoint);
    url.searchParams.set('query', 'query ($names: [String!]!) { profiles(names: $names) { name } }');
    url.searchParams.set('variables', JSON.stringify({ names: ['empty@me', 'nobody@me'] }));
    const response = await fetch(url, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({ data: { profiles: [{ name: 'empty@me' }, null] } });
  });

  it('reports bad input as BAD_USER_INPUT with the contract message', async () => {
    const answer = await postGraphQL(fetch, endpoint, '{ profile(name: "no name") { name } }');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      data: { profile: null },
      errors: [{ message: 'Invalid name format, expected <local>@<domain>', extensions: { code: 'BAD_USER_INPUT' } }],
    });
  });

  it('serves GraphiQL to browsers, opening with the example query', async () => {
    const response = await fetch(endpoint, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toContain('GraphiQL');
    // The example travels JSON-encoded inside the page.
    expect(html).toContain(JSON.stringify(GRAPHIQL_EXAMPLE_QUERY).slice(1, 80));
  });

  it('runs the GraphiQL example query without errors', async () => {
    const answer = await postGraphQL(fetch, endpoint, GRAPHIQL_EXAMPLE_QUERY);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data).toMatchObject({
      profile: { name: 'demo@me', phone: { numbers: ['+15550100', '+15550111'] } },
      ownerCheck: { hasCreated: false, email: 'hello@demo.example', name: 'demo@me' },
    });
  });

  it('answers CORS preflights and answers with the one CORS policy of /api (any origin, no credentials)', async () => {
    const preflight = await corsPreflight(endpoint, 'POST', 'content-type');
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();

    const restPreflight = await corsPreflight(endpoint.replace('/graphql', '/api/demo@me'), 'GET');
    expect(restPreflight.headers.get('access-control-allow-headers')).toBe(
      preflight.headers.get('access-control-allow-headers'),
    );

    const answer = await fetch(`${endpoint}?query=%7B__typename%7D`, { headers: { origin: 'https://app.example' } });
    const rest = await fetch(endpoint.replace('/graphql', '/api/demo@me'), {
      headers: { origin: 'https://app.example' },
    });
    for (const response of [answer, rest]) {
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
    expect(answer.headers.get('access-control-expose-headers')).toBe(rest.headers.get('access-control-expose-headers'));
  });

  it('takes automatic persisted queries: a hash alone once the document came with it, and refuses a wrong hash', async () => {
    const query = `query Persisted { profile(name: "demo@me") { name } } # ${Math.random()}`;
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const send = (body: Record<string, unknown>) =>
      fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const extensions = { persistedQuery: { version: 1, sha256Hash } };

    const unknown = await send({ extensions });
    expect(
      ((await unknown.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]?.extensions.code,
    ).toBe('PERSISTED_QUERY_NOT_FOUND');
    const registered = await send({ query, extensions });
    expect(await registered.json()).toEqual({ data: { profile: { name: 'demo@me' } } });
    const byHash = await fetch(`${endpoint}?extensions=${encodeURIComponent(JSON.stringify(extensions))}`, {
      headers: { accept: 'application/graphql-response+json' },
    });
    expect(await byHash.json()).toEqual({ data: { profile: { name: 'demo@me' } } });
    const mismatch = await send({ query: '{ __typename }', extensions });
    expect(mismatch.status).toBe(400);
  });

  it('carries the request id: the client’s when sane, a new one otherwise', async () => {
    const echoed = await fetch(`${endpoint}?query=%7B__typename%7D`, { headers: { 'x-request-id': 'client-id-42' } });
    expect(echoed.headers.get('x-request-id')).toBe('client-id-42');
    const fresh = await fetch(`${endpoint}?query=%7B__typename%7D`, {
      headers: { 'x-request-id': 'bad id\twith tab' },
    });
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('limits owner checks per client address across requests, and never answers private e-mails', async () => {
    const check = `{ ownerCheck(email: "${PRIVATE_EMAILS.demoCreator}", name: "demo@me") { hasCreated email name } }`;
    // The GraphiQL example above made one check from this address already.
    const answers = [];
    for (let i = 0; i < OWNER_CHECK_LIMIT; i++) answers.push(await postGraphQL(fetch, endpoint, check));
    expect(answers.slice(0, OWNER_CHECK_LIMIT - 1).map((answer) => answer.body.data?.ownerCheck)).toEqual(
      Array(OWNER_CHECK_LIMIT - 1).fill({ hasCreated: true, email: PRIVATE_EMAILS.demoCreator, name: 'demo@me' }),
    );
    const refused = answers[OWNER_CHECK_LIMIT - 1]!;
    expect(errorCodes(refused.body)).toEqual(['RATE_LIMITED']);
    expect(refused.body.errors![0]!.message).toMatch(/^Too many requests, retry in \d+ seconds$/);
    expect(refused.text).not.toContain(PRIVATE_EMAILS.demoCreator);

    const everything = await postGraphQL(
      fetch,
      endpoint,
      `{ profiles(names: ["demo@me", "self@me", "x@other", "odd@me"]) {
      name description records { raw } } }`,
    );
    for (const email of Object.values(PRIVATE_EMAILS)) expect(everything.text).not.toContain(email);
  });

  describe('HTTP caching of GET answers', () => {
    const get = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${endpoint}?query=${encodeURIComponent(query)}`, { headers });

    it('caches answers whose root fields come through fragments, spread or inline, and not with an owner check', async () => {
      const spread = await get('query { ...P } fragment P on Query { profile(name: "demo@me") { name } }');
      expect(spread.headers.get('cache-control')).toBe('public, max-age=60');
      expect(spread.headers.get('etag')).toMatch(/^"[\w-]{27}(-(br|zstd|gzip))?"$/);
      const inline = await get('{ ... @include(if: true) { profile(name: "demo@me") { name } } }');
      expect(inline.headers.get('etag')).toBe(spread.headers.get('etag'));
      // Last in the file: it spends one of the owner checks the test above counts.
      const hidden = await get(
        'query { ...P } fragment P on Query { ... on Query { ownerCheck(email: "a@b.example", name: "demo@me") { hasCreated } } }',
      );
      expect(hidden.headers.get('cache-control')).toBe('no-store');
      expect(hidden.headers.get('etag')).toBeNull();
    });

    it('gives each media type its own ETag, and a 304 that repeats Vary and Cache-Control', async () => {
      const query = '{ profile(name: "demo@me") { name level } }';
      const json = await get(query, { accept: 'application/json' });
      const graphqlJson = await get(query, { accept: 'application/graphql-response+json' });
      expect(json.headers.get('vary')).toBe('Accept, Accept-Encoding');
      expect(json.headers.get('etag')).not.toBe(graphqlJson.headers.get('etag'));
      const notModified = await get(query, { accept: 'application/json', 'if-none-match': json.headers.get('etag')! });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('vary')).toBe('Accept, Accept-Encoding');
      expect(notModified.headers.get('cache-control')).toBe('public, max-age=60');
      // The other representation's validator does not match this one.
      const other = await get(query, { accept: 'application/json', 'if-none-match': graphqlJson.headers.get('etag')! });
      expect(other.status).toBe(200);
    });

    it('never marks a streamed answer cacheable', async () => {
      const streamed = await get('{ profile(name: "demo@me") { name } }', { accept: 'text/event-stream' });
      expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(streamed.headers.get('cache-control')).toBe('no-store');
      expect(streamed.headers.get('etag')).toBeNull();
      await streamed.body?.cancel();
    });
  });
});
