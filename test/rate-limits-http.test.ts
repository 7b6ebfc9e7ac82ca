/**
 * Rate limits as a client meets them over a real socket, REST and GraphQL together, on every test
 * database: the owner-check budget (every request counts, one budget for both surfaces, every
 * `ownerCheck` field counts), the separate profile budget, the headers and the 429 of the
 * contract, and which client a request is counted against (X-Forwarded-For only through
 * TRUST_PROXY_HOPS). Each test starts a server of its own, so each starts with a full budget.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { errorCodes, type FetchLike, type GraphQLAnswer, postGraphQL } from './support/graphql-client.js';

/** A true owner check of the demo data: maker@example.com created demo@me. */
const CHECK_QUERY = 'email=maker@example.com&name=demo@me';
const CHECK_ANSWER = { hasCreated: true, email: 'maker@example.com', name: 'demo@me' };
const GRAPHQL_CHECK = '{ ownerCheck(email: "maker@example.com", name: "demo@me") { hasCreated email name } }';

const TOO_MANY = /^Too many requests, retry in (\d+) seconds$/;

interface RateLimitHeaders {
  limit: number;
  remaining: number;
  reset: number;
}

/** The RateLimit-* headers as numbers; undefined when the response has none of them. */
function rateLimitOf(response: Response): RateLimitHeaders | undefined {
  const [limit, remaining, reset] = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].map((name) =>
    response.headers.get(name),
  );
  if (limit === null && remaining === null && reset === null) return undefined;
  return { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) };
}

/** Checks a 429 against the contract and returns its N (seconds). */
async function expectTooManyRequests(response: Response, limit: number): Promise<number> {
  expect(response.status).toBe(429);
  const body = (await response.json()) as { error: string };
  expect(Object.keys(body)).toEqual(['error']);
  const seconds = Number(TOO_MANY.exec(body.error)?.[1]);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  expect(response.headers.get('retry-after')).toBe(String(seconds));
  expect(rateLimitOf(response)).toEqual({ limit, remaining: 0, reset: seconds });
  return seconds;
}

/** Checks a RATE_LIMITED field error: the contract's message, and retryAfter matching it. */
function expectRateLimitedError(error: { message: string; extensions?: Record<string, unknown> } | undefined): void {
  expect(error?.extensions?.code).toBe('RATE_LIMITED');
  const retryAfter = error?.extensions?.retryAfter;
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(error?.message).toBe(`Too many requests, retry in ${String(retryAfter)} seconds`);
}

describe.each(databaseKinds())('rate limits over HTTP on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    expect((await seedDemoData(handle.db)).ok).toBe(true);
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  afterAll(async () => {
    await handle?.close();
    await testDb?.drop();
  });

  /** A server with a fresh budget; `env` sets the limits. */
  async function serve(env: Record<string, string> = {}) {
    const server = await startTestServer(handle, env);
    servers.push(server);
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers });
    const fetchWith =
      (headers: Record<string, string>): FetchLike =>
      (input, init = {}) =>
        fetch(input, { ...init, headers: { ...(init.headers as Record<string, string>), ...headers } });
    const graphql = <T = Record<string, unknown>>(
      query: string,
      variables?: Record<string, unknown>,
      headers: Record<string, string> = {},
    ): Promise<GraphQLAnswer<T>> => postGraphQL<T>(fetchWith(headers), `${server.url}/graphql`, query, variables);
    return { url: server.url, get, graphql };
  }

  describe('owner check', () => {
    it('allows 10 checks per minute by default, then answers 429 with Retry-After', async () => {
      const { get } = await serve();
      for (let i = 1; i <= 10; i++) {
        const response = await get(`/api/owner-check?${CHECK_QUERY}`);
        expect(response.status, `check ${i}`).toBe(200);
        expect(await response.json()).toEqual(CHECK_ANSWER);
        const headers = rateLimitOf(response)!;
        expect(headers).toMatchObject({ limit: 10, remaining: 10 - i });
        expect(headers.reset).toBeGreaterThanOrEqual(1);
        expect(headers.reset).toBeLessThanOrEqual(60);
      }
      await expectTooManyRequests(await get(`/api/owner-check?${CHECK_QUERY}`), 10);
      // Refused requests do not end the refusal early: the next one is refused too.
      await expectTooManyRequests(await get(`/api/owner-check?${CHECK_QUERY}`), 10);
    });

    it('counts every request, valid or not, and carries the headers on 400 answers', async () => {
      const { get } = await serve({ OWNER_CHECK_LIMIT: '5' });
      const invalid = [
        ['', 'Both email and name parameters are required'],
        ['email=maker@example.com', 'Both email and name parameters are required'],
        ['email=not-an-email&name=demo@me', 'Invalid email format'],
        ['email=maker@example.com&name=no-at-sign', 'Invalid name format, expected <local>@<domain>'],
        ['email=a@example.com&email=b@example.com&name=demo@me', 'Invalid email format'],
      ] as const;
      for (const [index, [query, message]] of invalid.entries()) {
        const response = await get(`/api/owner-check?${query}`);
        expect(response.status, query).toBe(400);
        expect(await response.json()).toEqual({ error: message });
        expect(rateLimitOf(response)).toMatchObject({ limit: 5, remaining: 4 - index });
      }
      // The budget is gone although not one check was answered.
      await expectTooManyRequests(await get(`/api/owner-check?${CHECK_QUERY}`), 5);
    });

    it('counts HEAD requests like GET', async () => {
      const { get, url } = await serve({ OWNER_CHECK_LIMIT: '2' });
      const head = await fetch(`${url}/api/owner-check?${CHECK_QUERY}`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(rateLimitOf(head)).toMatchObject({ limit: 2, remaining: 1 });
      expect((await get(`/api/owner-check?${CHECK_QUERY}`)).status).toBe(200);
      const refusedHead = await fetch(`${url}/api/owner-check?${CHECK_QUERY}`, { method: 'HEAD' });
      expect(refusedHead.status).toBe(429);
      expect(refusedHead.headers.get('retry-after')).toMatch(/^\d+$/);
    });

    it('shares one budget between REST calls and GraphQL ownerCheck fields', async () => {
      const { get, graphql, url } = await serve({ OWNER_CHECK_LIMIT: '5' });

      const first = await get(`/api/owner-check?${CHECK_QUERY}`);
      expect(rateLimitOf(first)).toMatchObject({ limit: 5, remaining: 4 });
      expect((await graphql(GRAPHQL_CHECK)).body).toEqual({ data: { ownerCheck: CHECK_ANSWER } });
      // GraphQL over GET draws on it as well.
      const overGet = await fetch(`${url}/graphql?query=${encodeURIComponent(GRAPHQL_CHECK)}`, {
        headers: { accept: 'application/graphql-response+json' },
      });
      expect(((await overGet.json()) as { data: unknown }).data).toEqual({ ownerCheck: CHECK_ANSWER });
      const third = await get(`/api/owner-check?${CHECK_QUERY}`);
      expect(rateLimitOf(third)).toMatchObject({ remaining: 1 });

      // One point left, two fields asking: the first answers, the second is refused.
      const both = await graphql<{ a: unknown; b: unknown }>(
        '{ a: ownerCheck(email: "maker@example.com", name: "demo@me") { hasCreated } b: ownerCheck(email: "x@example.com", name: "demo@me") { hasCreated } }',
      );
      expect(both.status).toBe(200);
      expect(both.body.data).toEqual({ a: { hasCreated: true }, b: null });
      expect(both.body.errors).toHaveLength(1);
      expect(both.body.errors![0]!.path).toEqual(['b']);
      expectRateLimitedError(both.body.errors![0]);

      await expectTooManyRequests(await get(`/api/owner-check?${CHECK_QUERY}`), 5);
      expect(errorCodes((await graphql(GRAPHQL_CHECK)).body)).toEqual(['RATE_LIMITED']);
    });

    it('counts each ownerCheck field of a document, aliases and invalid ones included; the rest of the document answers', async () => {
      const { get, graphql } = await serve({ OWNER_CHECK_LIMIT: '3' });
      const answer = await graphql<Record<string, unknown>>(`{
        a: ownerCheck(email: "maker@example.com", name: "demo@me") { hasCreated }
        b: ownerCheck(email: "not-an-email", name: "demo@me") { hasCreated }
        c: ownerCheck(email: "owner@example.com", name: "empty@me") { hasCreated }
        d: ownerCheck(email: "maker@example.com", name: "demo@me") { hasCreated }
        e: ownerCheck(email: "zoe@example.org", name: "zoë.müller@studio") { hasCreated }
        profile(name: "demo@me") { name }
      }`);

      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual({
        a: { hasCreated: true },
        b: null,
        c: { hasCreated: true },
        d: null,
        e: null,
        profile: { name: 'demo@me' },
      });
      const byField = new Map((answer.body.errors ?? []).map((error) => [error.path?.[0], error]));
      expect([...byField.keys()].sort()).toEqual(['b', 'd', 'e']);
      expect(byField.get('b')).toMatchObject({
        message: 'Invalid email format',
        extensions: { code: 'BAD_USER_INPUT' },
      });
      expectRateLimitedError(byField.get('d'));
      expectRateLimitedError(byField.get('e'));

      await expectTooManyRequests(await get(`/api/owner-check?${CHECK_QUERY}`), 3);
    });

    it('gives no extra checks through JSON batching (refused whole)', async () => {
      const { get, url } = await serve({ OWNER_CHECK_LIMIT: '2' });
      const batch = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify(Array.from({ length: 5 }, () => ({ query: GRAPHQL_CHECK }))),
      });
      expect(batch.status).toBe(400);
      expect(await batch.text()).not.toContain('hasCreated');
      // Nothing was executed, so nothing was drawn either.
      expect(rateLimitOf(await get(`/api/owner-check?${CHECK_QUERY}`))).toMatchObject({ limit: 2, remaining: 1 });
    });
  });

  describe('profile lookups', () => {
    it('have a budget of their own, shared by REST and GraphQL (one point per name)', async () => {
      const { get, graphql } = await serve({ PROFILE_LIMIT: '8', OWNER_CHECK_LIMIT: '2' });

      const found = await get('/api/demo@me');
      expect(found.status).toBe(200);
      expect(rateLimitOf(found)).toMatchObject({ limit: 8, remaining: 7 });
      // 304, 404 and 400 answers count and carry the headers too.
      const notModified = await get('/api/demo@me', { 'If-None-Match': found.headers.get('etag')! });
      expect(notModified.status).toBe(304);
      expect(rateLimitOf(notModified)).toMatchObject({ limit: 8, remaining: 6 });
      const missing = await get('/api/nobody@me');
      expect(missing.status).toBe(404);
      expect(rateLimitOf(missing)).toMatchObject({ remaining: 5 });
      const invalid = await get('/api/not-a-name');
      expect(invalid.status).toBe(400);
      expect(rateLimitOf(invalid)).toMatchObject({ remaining: 4 });

      const three = await graphql<{ profiles: Array<{ name: string } | null> }>(
        '{ profiles(names: ["demo@me", "empty@me", "nobody@me"]) { name } }',
      );
      expect(three.body).toEqual({ data: { profiles: [{ name: 'demo@me' }, { name: 'empty@me' }, null] } });
      expect(rateLimitOf(await get('/api/empty@me'))).toMatchObject({ remaining: 0 });

      await expectTooManyRequests(await get('/api/demo@me'), 8);
      const refused = await graphql('{ profile(name: "demo@me") { name } }');
      expect(refused.body.data).toEqual({ profile: null });
      expect(refused.body.errors).toHaveLength(1);
      expectRateLimitedError(refused.body.errors![0]);

      // The owner-check budget is untouched by all of this.
      const check = await get(`/api/owner-check?${CHECK_QUERY}`);
      expect(check.status).toBe(200);
      expect(rateLimitOf(check)).toMatchObject({ limit: 2, remaining: 1 });
    });

    it('draw nothing from the owner-check budget, and owner checks draw nothing from theirs', async () => {
      const { get } = await serve({ PROFILE_LIMIT: '3', OWNER_CHECK_LIMIT: '1' });
      expect((await get(`/api/owner-check?${CHECK_QUERY}`)).status).toBe(200);
      await expectTooManyRequests(await get(`/api/owner-check?${CHECK_QUERY}`), 1);
      const profile = await get('/api/demo@me');
      expect(profile.status).toBe(200);
      expect(rateLimitOf(profile)).toMatchObject({ limit: 3, remaining: 2 });
    });

    it('are not limited with PROFILE_LIMIT=0, and answer without RateLimit headers', async () => {
      const { get, graphql } = await serve({ PROFILE_LIMIT: '0', OWNER_CHECK_LIMIT: '2' });
      for (let i = 0; i < 30; i++) {
        const response = await get(i % 3 === 0 ? '/api/nobody@me' : '/api/demo@me');
        expect(response.status).toBe(i % 3 === 0 ? 404 : 200);
        expect(rateLimitOf(response)).toBeUndefined();
      }
      const names = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? 'demo@me' : `n${i}@me`));
      for (let i = 0; i < 3; i++) {
        const answer = await graphql<{ profiles: unknown[] }>(
          'query ($names: [String!]!) { profiles(names: $names) { name } }',
          { names },
        );
        expect(answer.body.errors).toBeUndefined();
        expect(answer.body.data?.profiles).toHaveLength(100);
      }
      // The owner check stays limited.
      const check = await get(`/api/owner-check?${CHECK_QUERY}`);
      expect(rateLimitOf(check)).toMatchObject({ limit: 2, remaining: 1 });
    });
  });

  describe('client address', () => {
    it('ignores X-Forwarded-For with TRUST_PROXY_HOPS=0: a forged header gets no fresh budget', async () => {
      const { get, graphql } = await serve({ OWNER_CHECK_LIMIT: '2' });
      expect((await get(`/api/owner-check?${CHECK_QUERY}`, { 'X-Forwarded-For': '198.51.100.1' })).status).toBe(200);
      expect((await get(`/api/owner-check?${CHECK_QUERY}`, { 'X-Forwarded-For': '198.51.100.2' })).status).toBe(200);
      for (const forged of ['198.51.100.3', '198.51.100.4, 203.0.113.9', '2001:db8::1', 'unknown']) {
        await expectTooManyRequests(await get(`/api/owner-check?${CHECK_QUERY}`, { 'X-Forwarded-For': forged }), 2);
      }
      const overGraphQL = await graphql(GRAPHQL_CHECK, undefined, { 'X-Forwarded-For': '198.51.100.5' });
      expect(errorCodes(overGraphQL.body)).toEqual(['RATE_LIMITED']);
    });

    it('with TRUST_PROXY_HOPS=1 counts the right-most X-Forwarded-For entry as the client', async () => {
      const { get, graphql } = await serve({ OWNER_CHECK_LIMIT: '2', TRUST_PROXY_HOPS: '1' });
      // The proxy appended 203.0.113.10; whatever the client wrote before it does not matter.
      const viaProxy = (clientWrote: string, proxySaw: string) => ({
        'X-Forwarded-For': `${clientWrote}, ${proxySaw}`,
      });

      expect((await get(`/api/owner-check?${CHECK_QUERY}`, viaProxy('1.1.1.1', '203.0.113.10'))).status).toBe(200);
      expect((await graphql(GRAPHQL_CHECK, undefined, viaProxy('2.2.2.2', '203.0.113.10'))).body.data).toEqual({
        ownerCheck: CHECK_ANSWER,
      });
      await expectTooManyRequests(await get(`/api/owner-check?${CHECK_QUERY}`, viaProxy('3.3.3.3', '203.0.113.10')), 2);

      // Another client behind the same proxy has a budget of its own.
      const other = await get(`/api/owner-check?${CHECK_QUERY}`, viaProxy('1.1.1.1', '203.0.113.11'));
      expect(other.status).toBe(200);
      expect(rateLimitOf(other)).toMatchObject({ remaining: 1 });
      expect((await get(`/api/owner-check?${CHECK_QUERY}`, { 'X-Forwarded-For': '203.0.113.11' })).status).toBe(200);
      await expectTooManyRequests(
        await get(`/api/owner-check?${CHECK_QUERY}`, { 'X-Forwarded-For': '203.0.113.11' }),
        2,
      );

      // A request that came without the header (past the proxy) counts against the peer address.
      const direct = await get(`/api/owner-check?${CHECK_QUERY}`);
      expect(direct.status).toBe(200);
      expect(rateLimitOf(direct)).toMatchObject({ remaining: 1 });
    });
  });
});
