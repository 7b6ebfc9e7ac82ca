/**
 * Prepared operations (src/graphql/execution/prepared-operations.ts): a query that ran whole once
 * skips Yoga's parameter, parse and validate hooks from then on. What is learned, and that a
 * prepared request still does everything a request does: its rate-limit budget, its metrics,
 * its masked errors, its variables checked, and the same answer as the first time.
 */
import { type DocumentNode, type ExecutionResult, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import { PreparedOperations } from '../src/graphql/execution/prepared-operations.js';
import { startTestServer, TEST_GRAPHQL_HTTP_PATH, type TestServer } from './support/app-server.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { errorCodes, postGraphQL } from './support/graphql-client.js';
import { readMetrics } from './support/metrics.js';

function preparedOver(cache: Map<string, DocumentNode>) {
  const executed: DocumentNode[] = [];
  const prepared = new PreparedOperations({
    plan: { preparesQueries: true },
    documents: { get: (text) => cache.get(text), set: (text, document) => cache.set(text, document) },
    getEnveloped: () => ({
      schema: {},
      contextFactory: () => ({}),
      execute: ({ document }) => {
        executed.push(document);
        return { data: {} };
      },
    }),
    answerError: (error) => ({ errors: [] as never, extensions: { thrown: String(error) } }),
  });
  return { prepared, executed };
}

const RAN: ExecutionResult = { data: { profile: null } };

describe('what prepared operations learn', () => {
  const QUERY = 'query A { a: __typename } query B { b: __typename }';

  it('prepares a cached query document only after a result with data, per operation name', () => {
    const cache = new Map([[QUERY, parse(QUERY)]]);
    const { prepared } = preparedOver(cache);
    expect(prepared.find({ query: QUERY, operationName: 'A' })).toBeUndefined();
    prepared.learn({ query: QUERY, operationName: 'A' }, { errors: [] });
    expect(prepared.find({ query: QUERY, operationName: 'A' })).toBeUndefined();
    prepared.learn({ query: QUERY, operationName: 'A' }, RAN);
    expect(prepared.find({ query: QUERY, operationName: 'A' })).toBe(cache.get(QUERY));
    expect(prepared.find({ query: QUERY, operationName: 'B' })).toBeUndefined();
    expect(prepared.find({ query: QUERY })).toBeUndefined();
  });

  it('never prepares a request with extensions, a text not in the cache, or an evicted document', () => {
    const text = '{ __typename }';
    const cache = new Map([[text, parse(text)]]);
    const { prepared } = preparedOver(cache);
    prepared.learn({ query: text }, RAN);
    expect(prepared.find({ query: text })).toBeDefined();
    expect(prepared.find({ query: text, extensions: { persistedQuery: { version: 1 } } })).toBeUndefined();
    expect(prepared.find({ query: `${text} ` })).toBeUndefined();
    cache.delete(text);
    expect(prepared.find({ query: text })).toBeUndefined();
    // A new parse of the same text is a new document: it is learned anew.
    cache.set(text, parse(text));
    expect(prepared.find({ query: text })).toBeUndefined();
  });

  it('never prepares mutations or subscriptions, nor a text seen but not cached', () => {
    const mutation = 'mutation { m }';
    const subscription = 'subscription { s }';
    const cache = new Map([
      [mutation, parse(mutation)],
      [subscription, parse(subscription)],
    ]);
    const { prepared } = preparedOver(cache);
    prepared.learn({ query: mutation }, RAN);
    prepared.learn({ query: subscription }, RAN);
    prepared.learn({ query: '{ notCached }' }, RAN);
    expect(prepared.find({ query: mutation })).toBeUndefined();
    expect(prepared.find({ query: subscription })).toBeUndefined();
    expect(prepared.find({ query: '{ notCached }' })).toBeUndefined();
  });

  it('runs the cached document with the request and parameters in the context, and answers a throw', async () => {
    const text = '{ __typename }';
    const cache = new Map([[text, parse(text)]]);
    const { prepared, executed } = preparedOver(cache);
    const context: { request?: unknown; params?: object } = {};
    const params = { query: text, variables: { n: 1 } };
    expect(await prepared.run(cache.get(text) as DocumentNode, params, 'the request', context)).toEqual({ data: {} });
    expect(executed).toEqual([cache.get(text)]);
    expect(context).toEqual({ request: 'the request', params });

    const throwing = new PreparedOperations({
      plan: { preparesQueries: true },
      documents: { get: () => undefined, set: () => {} },
      getEnveloped: () => {
        throw new Error('boom');
      },
      answerError: (error) => ({ errors: [], extensions: { thrown: (error as Error).message } }),
    });
    expect(await throwing.run(parse(text), params, undefined, {})).toEqual({
      errors: [],
      extensions: { thrown: 'boom' },
    });
  });
});

describe('a prepared request over HTTP', () => {
  let database: TestDatabase;
  let server: TestServer;
  const OWNER_CHECK_LIMIT = 4;

  beforeAll(async () => {
    database = await createTestDatabase('pglite');
    const handle = await database.open();
    await seedDemoData(handle.db);
    await handle.close();
    server = await startTestServer(await database.open(), {
      OWNER_CHECK_LIMIT: String(OWNER_CHECK_LIMIT),
      PROFILE_LIMIT: '0',
    });
  });
  afterAll(async () => {
    const handle = server?.app.database;
    await server?.close();
    await handle?.close();
    await database?.drop();
  });

  const url = () => `${server.url}/graphql`;

  it('answers as the first time, and is taken from the third request of a document on', async () => {
    const query = 'query P($n: String!) { profile(name: $n) { name description records { key type raw } } }';
    const answers = [];
    for (let i = 0; i < 5; i += 1) answers.push(await postGraphQL(fetch, url(), query, { n: 'demo@me' }));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.text).toBe(answers[0]?.text);
    }
    expect(answers[0]!.body.data).toMatchObject({ profile: { name: 'demo@me' } });
    // The document cache keeps a text from its second sighting; the third request runs prepared.
    const found = server.app.graphql.prepared.find({ query });
    if (TEST_GRAPHQL_HTTP_PATH === 'service') expect(found).toBeDefined();
    else expect(found).toBeUndefined();
  });

  it('spends the budget, refuses bad variables and masks errors on every request', async () => {
    const check = 'query C($e: String!) { ownerCheck(email: $e, name: "demo@me") { hasCreated } }';
    const codes: unknown[][] = [];
    for (let i = 0; i < OWNER_CHECK_LIMIT + 2; i += 1) {
      const answer = await postGraphQL(fetch, url(), check, { e: 'maker@example.com' });
      codes.push(errorCodes(answer.body));
    }
    expect(codes.slice(0, OWNER_CHECK_LIMIT)).toEqual(Array(OWNER_CHECK_LIMIT).fill([]));
    expect(codes.slice(OWNER_CHECK_LIMIT)).toEqual([['RATE_LIMITED'], ['RATE_LIMITED']]);

    const lookup = 'query L($n: String!) { profile(name: $n) { name } }';
    for (let i = 0; i < 4; i += 1) {
      const bad = await postGraphQL(fetch, url(), lookup, { n: 'not a name' });
      expect(errorCodes(bad.body)).toEqual(['BAD_USER_INPUT']);
      const missing = await postGraphQL(fetch, url(), lookup, {});
      expect(missing.status).toBe(400);
      expect(errorCodes(missing.body)).toEqual(['BAD_USER_INPUT']);
      const good = await postGraphQL(fetch, url(), lookup, { n: 'demo@me' });
      expect(good.body).toEqual({ data: { profile: { name: 'demo@me' } } });
    }
  });

  it('counts every request in the operation metrics', async () => {
    const query = 'query Counted { profile(name: "demo@me") { name } }';
    for (let i = 0; i < 5; i += 1) await postGraphQL(fetch, url(), query);
    const counted = { operation: 'Counted', outcome: 'ok' };
    expect((await readMetrics(server.url)).value('graphql_operation_duration_seconds_count', counted)).toBe(5);
  });
});
