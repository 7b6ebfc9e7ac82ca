/**
 * Ready GraphQL answers of cached profiles (src/graphql/execution/profile-answers.ts): once a
 * profile is cached, a lookup of it with a qualifying selection is answered from a kept text,
 * which must be the answer execution gives, byte for byte, on both GraphQL paths; every lookup
 * still draws on the budget; a changed profile is answered anew; and only selections computed
 * from the profile alone qualify.
 */
import { getNamedType, isCompositeType, isInterfaceType, isUnionType, parse } from 'graphql';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { answerPlanOf, PROFILE_FIELDS } from '../src/graphql/execution/profile-answers.js';
import { schema } from '../src/graphql/schema/schema.js';
import { Profile } from '../src/profiles/profile.js';
import { GRAPHQL_PATH_RERUN, startTestServer, type TestServer, useTestServer } from './support/app-server.js';
import { databaseKinds } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { postGraphQL } from './support/graphql-client.js';
import {
  bulkName,
  changeDescription,
  FIXTURE_PROFILES,
  insertGraphQLFixtures,
  KEPT_ANSWER_QUERIES,
  PROFILE_QUERY,
} from './support/graphql-fixtures.js';

/** The names of the fixtures, one without a profile and one that is no name ID. */
const ABSENT = ['nobody@me', 'not a name'];
const NAMES = [...FIXTURE_PROFILES.map((profile) => profile.name), ...ABSENT];

/** The first three of KEPT_ANSWER_QUERIES, each with the same selection asked of a list of names. */
const SINGLE_ROOT = /^query \w+\(\$(\w+): String!\) \{ (\w+: )?profile\(name: \$\w+\)/;
const KEPT_ANSWER_LISTS = KEPT_ANSWER_QUERIES.slice(0, 3).map((single) => ({
  single,
  variable: SINGLE_ROOT.exec(single)?.[1] ?? 'n',
  list: single.replace(SINGLE_ROOT, (_all, _variable, alias: string | undefined) => {
    return `query L($names: [String!]!) { ${alias ?? ''}profiles(names: $names)`;
  }),
}));

/** Enough lookups of a name for the cache to keep it (its second) and an answer to be kept and used. */
const LOOKUPS = 4;

interface Answer {
  status: number;
  text: string;
  etag: string | null;
}

async function post(
  server: TestServer,
  query: string,
  variables: Record<string, unknown>,
  operationName?: string,
): Promise<Answer> {
  const { status, text, headers } = await postGraphQL(fetch, `${server.url}/graphql`, query, variables, operationName);
  return { status, text, etag: headers.get('etag') };
}

async function get(server: TestServer, query: string, variables: Record<string, unknown>): Promise<Answer> {
  const search = new URLSearchParams({ query, variables: JSON.stringify(variables) });
  const response = await fetch(`${server.url}/graphql?${search}`);
  return { status: response.status, text: await response.text(), etag: response.headers.get('etag') };
}

/** The kept answer of the cached profile `name` for `query`'s selection, if any. */
function keptAnswer(server: TestServer, query: string, name: string): string | undefined {
  const plan = answerPlanOf(schema, parse(query), undefined);
  if (plan === undefined) throw new Error(`no answers are kept for ${query}`);
  return server.app.cache.get(name)?.answerFor(plan.key);
}

/** Waits until the server's profile cache answers: on PostgreSQL, once its change feed is live. */
async function cacheAnswering(server: TestServer): Promise<void> {
  await eventually(() => server.app.cache.stats().answering, { what: 'the profile cache to answer', withinMs: 5000 });
}

describe.each(databaseKinds())('ready answers of cached profiles, on %s', (kind) => {
  const env = { PROFILE_LIMIT: '0', PROFILE_CACHE_SIZE: '100' };
  const suite = useTestServer(kind, insertGraphQLFixtures, env);
  let keeping: TestServer;
  let executing: TestServer;

  beforeAll(async () => {
    keeping = suite.server;
    executing = await startTestServer(suite.handle, env, undefined, { graphql: { keptAnswers: false } });
    await cacheAnswering(keeping);
  });
  afterAll(async () => {
    await executing?.close();
  });

  // A profile keeps the answers of the first three selections asked of it: the fourth query is
  // answered by execution every time, and must be the same.
  it('answers every lookup as execution does, byte for byte, once the answer is kept too', async () => {
    for (const [index, query] of KEPT_ANSWER_QUERIES.entries()) {
      const variable = query.includes('$who') ? 'who' : 'n';
      for (const name of NAMES) {
        const expected = await post(executing, query, { [variable]: name });
        expect(expected, query).toMatchObject({ status: 200 });
        for (let i = 0; i < LOOKUPS; i += 1) {
          const answer = await post(keeping, query, { [variable]: name });
          expect({ name, status: answer.status, text: answer.text }).toEqual({
            name,
            status: 200,
            text: expected.text,
          });
        }
        if (!ABSENT.includes(name)) {
          expect(keptAnswer(keeping, query, name) !== undefined, `${name}: ${query}`).toBe(index < 3);
        }
      }
    }
  });

  it('answers as execution does where the operation, name or variables do not fit the kept answer', async () => {
    const query = KEPT_ANSWER_QUERIES[0] as string;
    for (let i = 0; i < LOOKUPS; i += 1) await post(keeping, query, { n: 'demo@me' });
    expect(keptAnswer(keeping, query, 'demo@me')).toBeDefined();
    const asks: Array<[Record<string, unknown>, string | undefined]> = [
      [{ n: 'demo@me' }, ''],
      [{ n: 'demo@me' }, 'Other'],
      [{ n: 'demo@me' }, 'P'],
      [{ n: 'DEMO@me' }, undefined],
      [{ n: 7 }, undefined],
      [{ n: null }, undefined],
      [{}, undefined],
    ];
    for (const [variables, operationName] of asks) {
      const expected = await post(executing, query, variables, operationName);
      const answer = await post(keeping, query, variables, operationName);
      expect({ variables, operationName, answer }).toEqual({ variables, operationName, answer: expected });
    }
  });

  // profiles(names:) writes each profile's answer (kept or written now) into one list; a failed
  // lookup (an invalid name, too many names) executes with the lookup already made.
  it('answers profiles(names:) as execution does, byte for byte, with answers kept and written', async () => {
    const valid = NAMES.filter((name) => name !== 'not a name');
    const lists = [
      valid,
      [...valid].reverse(),
      ['demo@me', 'DEMO@me', 'demo@me', 'nobody@me'],
      [],
      ['demo@me', 'not a name'],
      Array.from({ length: 101 }, (_, i) => bulkName(i)),
    ];
    for (const { single, variable, list } of KEPT_ANSWER_LISTS) {
      expect(list).toContain('profiles(names: $names)');
      const expected = new Map<readonly string[], string>();
      for (const names of lists) {
        const answer = await post(executing, list, { names });
        expect(answer.status, list).toBe(200);
        expected.set(names, answer.text);
      }
      const answersAsExpected = async () => {
        for (const names of lists) {
          const answer = await post(keeping, list, { names });
          expect({ names, text: answer.text }).toEqual({ names, text: expected.get(names) });
        }
      };
      // Lists do not fill the cache, so the bulk profiles' answers are written on every lookup;
      // profile(name:) lookups make the cache keep the fixtures and their answers, which lists use.
      await answersAsExpected();
      for (let i = 0; i < LOOKUPS; i += 1) {
        for (const name of valid) await post(keeping, single, { [variable]: name });
      }
      expect(keptAnswer(keeping, single, 'demo@me'), single).toBeDefined();
      await answersAsExpected();
      expect(answerPlanOf(schema, parse(list), undefined)).toMatchObject({
        list: true,
        key: answerPlanOf(schema, parse(single), undefined)?.key,
      });
    }
  });

  it('answers a query asked as an event stream from a kept answer as execution does', async () => {
    const query = KEPT_ANSWER_QUERIES[0] as string;
    for (let i = 0; i < LOOKUPS; i += 1) await post(keeping, query, { n: 'odd@me' });
    expect(keptAnswer(keeping, query, 'odd@me')).toBeDefined();
    const stream = async (server: TestServer) => {
      const response = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query, variables: { n: 'odd@me' } }),
      });
      return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
    };
    const expected = await stream(executing);
    expect(expected).toMatchObject({ status: 200, type: expect.stringContaining('text/event-stream') });
    expect(expected.text).toContain('"name":"odd@me"');
    expect(await stream(keeping)).toEqual(expected);
  });

  it('gives a GET answer from a kept answer the ETag of the executed one, and a 304 for it', async () => {
    const query = KEPT_ANSWER_QUERIES[0] as string;
    const answers: Answer[] = [];
    for (let i = 0; i < LOOKUPS; i += 1) answers.push(await get(keeping, query, { n: 'odd@me' }));
    expect(keptAnswer(keeping, query, 'odd@me')).toBeDefined();
    const executed = await get(executing, query, { n: 'odd@me' });
    for (const answer of answers) expect(answer).toEqual({ status: 200, text: executed.text, etag: executed.etag });
    const search = new URLSearchParams({ query, variables: JSON.stringify({ n: 'odd@me' }) });
    const revalidated = await fetch(`${keeping.url}/graphql?${search}`, {
      headers: { 'if-none-match': executed.etag ?? '' },
    });
    expect(revalidated.status).toBe(304);
  });

  it.skipIf(GRAPHQL_PATH_RERUN)('sends a kept answer over graphql-ws as its value', async () => {
    const query = KEPT_ANSWER_QUERIES[2] as string;
    for (let i = 0; i < LOOKUPS; i += 1) await post(keeping, query, { who: 'demo@me' });
    expect(keptAnswer(keeping, query, 'demo@me')).toBeDefined();
    const client = createWsClient({
      url: `${keeping.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
    });
    try {
      const result = await new Promise<unknown>((resolve, reject) => {
        client.subscribe(
          { query, variables: { who: 'demo@me' } },
          { next: resolve, error: reject, complete: () => {} },
        );
      });
      const executed = await post(executing, query, { who: 'demo@me' });
      expect(result).toEqual(JSON.parse(executed.text));
    } finally {
      await client.dispose();
    }
  });

  it('answers a changed profile with its new content, never the kept answer of the old one', async () => {
    const query = KEPT_ANSWER_QUERIES[0] as string;
    const description = async () =>
      (
        JSON.parse((await post(keeping, query, { n: 'x@other' })).text) as {
          data: { profile: { description: string } };
        }
      ).data.profile.description;
    for (let i = 0; i < LOOKUPS; i += 1) expect(await description()).toBe('Created by the demo maker.');
    expect(keptAnswer(keeping, query, 'x@other')).toBeDefined();

    await changeDescription(suite.handle.db, 'x@other', 'changed after its answer was kept');
    await eventually(async () => (await description()) === 'changed after its answer was kept', {
      what: 'the new description answered',
      withinMs: 2000,
      everyMs: 20,
    });
    for (let i = 0; i < LOOKUPS; i += 1) expect(await description()).toBe('changed after its answer was kept');
  });
});

describe.skipIf(GRAPHQL_PATH_RERUN)('ready answers and the rate limit', () => {
  const suite = useTestServer('pglite', insertGraphQLFixtures, { PROFILE_LIMIT: '40', PROFILE_CACHE_SIZE: '100' });
  let server: TestServer;

  beforeAll(async () => {
    server = suite.server;
    await cacheAnswering(server);
  });

  // 30 names asked once are each looked up once, before their answers are written; 10 lookups
  // of one name are answered from its kept answer once the cache keeps the profile. A lookup
  // made twice would run out after 20.
  it('draws one point for every lookup, executed or kept, and refuses the one over the limit', async () => {
    const query = PROFILE_QUERY('name');
    const names = [
      ...Array.from({ length: 30 }, (_, i) => bulkName(i)),
      ...Array<string>(10).fill('demo@me'),
      'demo@me',
    ];
    const answers: Answer[] = [];
    for (const name of names) answers.push(await post(server, query, { n: name }));
    expect(keptAnswer(server, query, 'demo@me')).toBeDefined();
    answers.slice(0, 40).forEach((answer, i) => {
      expect(answer.text).toBe(`{"data":{"profile":{"name":${JSON.stringify(names[i])}}}}`);
    });
    const refused = JSON.parse(answers[40]?.text ?? '{}') as { errors?: Array<{ extensions?: { code?: string } }> };
    expect(refused.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
  });
});

describe.skipIf(GRAPHQL_PATH_RERUN)('written list answers and the rate limit', () => {
  const suite = useTestServer('pglite', insertGraphQLFixtures, { PROFILE_LIMIT: '10', PROFILE_CACHE_SIZE: '100' });

  // A list refused for an invalid name executes with the lookup made before it; a list written
  // without execution made its lookup once. A lookup made twice would run out at the second list.
  it('draws one point per distinct name of a list, written or executed, and refuses the one over the limit', async () => {
    const server = suite.server;
    await cacheAnswering(server);
    const list = 'query L($names: [String!]!) { profiles(names: $names) { name } }';
    const ask = async (names: string[]) =>
      JSON.parse((await post(server, list, { names })).text) as {
        data?: { profiles: Array<{ name: string } | null> } | null;
        errors?: Array<{ extensions?: { code?: string } }>;
      };
    expect((await ask(['demo@me', 'odd@me', 'not a name'])).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const names = Array.from({ length: 6 }, (_, i) => bulkName(i));
    expect((await ask([...names, names[0] as string])).data?.profiles.map((profile) => profile?.name)).toEqual([
      ...names,
      names[0],
    ]);
    expect((await post(server, PROFILE_QUERY('name'), { n: 'demo@me' })).text).toBe(
      '{"data":{"profile":{"name":"demo@me"}}}',
    );
    expect((await ask(['demo@me'])).errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
  });
});

describe.skipIf(GRAPHQL_PATH_RERUN)("a profile's kept answers", () => {
  const profile = () =>
    new Profile({
      id: 1,
      name: 'demo@me',
      localPart: 'demo',
      namespace: 'me',
      description: '',
      image: '',
      level: 1,
      contentHash: 'hash',
      recordsJson: '{"1":{"type":"name","value":"Demo"}}',
    });

  it('keeps none for a profile the cache does not keep', () => {
    const loaded = profile();
    loaded.keepAnswer('name', '{"name":"demo@me"}');
    expect(loaded.answerFor('name')).toBeUndefined();
  });

  it('keeps the answers of the first three selections, each letting the split records go, and no more', () => {
    const cached = profile();
    cached.markKeptByCache();
    const records = cached.records;
    cached.keepAnswer('a', 'A');
    expect(cached.records).not.toBe(records);
    cached.keepAnswer('b', 'B');
    cached.keepAnswer('a', 'A again');
    cached.keepAnswer('c', 'C');
    const split = cached.records;
    cached.keepAnswer('d', 'D');
    expect(['a', 'b', 'c', 'd'].map((selection) => cached.answerFor(selection))).toEqual(['A', 'B', 'C', undefined]);
    expect(cached.records).toBe(split);
  });
});

describe.skipIf(GRAPHQL_PATH_RERUN)('which selections have kept answers', () => {
  const planOf = (query: string, operationName?: string) => answerPlanOf(schema, parse(query), operationName);

  it('keeps answers of a lone profile or profiles lookup by a String or list variable whose fields read the profile alone', () => {
    const plan = planOf(
      'query Mine($who: String) { me: profile(name: $who) { name ...F } } fragment F on Profile { level }',
    );
    expect(plan).toMatchObject({ responseKey: 'me', variable: 'who', list: false });
    expect(planOf('query ($all: [String!]!) { profiles(names: $all) { name } }')).toMatchObject({
      responseKey: 'profiles',
      variable: 'all',
      list: true,
    });
    // The same selection in another operation shares the answers; another selection does not.
    expect(planOf('query ($x: String!) { profile(name: $x) { name ...F } } fragment F on Profile { level }')?.key).toBe(
      plan?.key,
    );
    expect(
      planOf('query ($x: String!) { profile(name: $x) { name ...F } } fragment F on Profile { length }')?.key,
    ).not.toBe(plan?.key);
    expect(planOf('query ($x: String!) { profile(name: $x) { n: name } }')?.key).not.toBe(
      planOf('query ($x: String!) { profile(name: $x) { name } }')?.key,
    );
  });

  it.each([
    ['a literal name', '{ profile(name: "demo@me") { name } }'],
    ['a second root field', 'query ($n: String!) { profile(name: $n) { name } __typename }'],
    ['an argument below', 'query ($n: String!) { profile(name: $n) { avatarUrl(size: 64) } }'],
    ['a literal argument below', 'query ($n: String!) { profile(name: $n) { record(type: "phone") { key } } }'],
    ['a directive below', 'query ($n: String!, $b: Boolean!) { profile(name: $n) { name @include(if: $b) } }'],
    ['a directive on the root field', 'query ($n: String!) { profile(name: $n) @skip(if: false) { name } }'],
    [
      'a directive on a fragment',
      'query ($n: String!) { profile(name: $n) { ...F } } fragment F on Profile @skip(if: false) { name }',
    ],
    ['a default value', 'query ($n: String! = "demo@me") { profile(name: $n) { name } }'],
    ['a variable of another type', 'query ($n: ID!) { profile(name: $n) { name } }'],
    ['a mutation', 'mutation ($n: String!) { profile(name: $n) { name } }'],
    ['a list around the variable', 'query ($n: String!) { profiles(names: [$n]) { name } }'],
    ['a list literal', '{ profiles(names: ["demo@me"]) { name } }'],
    ['a list variable of another type', 'query ($n: [ID!]!) { profiles(names: $n) { name } }'],
    ['another root field', 'query ($n: String!) { nameCheck(name: $n) { __typename } }'],
  ])('keeps none for %s', (_what, query) => {
    expect(planOf(query)).toBeUndefined();
  });

  it('lists every field reachable from Profile, so a new one is a decision', () => {
    const reachable: Record<string, string[]> = {};
    const visit = (typeName: string): void => {
      const type = schema.getType(typeName);
      if (!isCompositeType(type) || reachable[typeName] !== undefined) return;
      const fields = 'getFields' in type ? Object.values(type.getFields()) : [];
      reachable[typeName] = fields.map((field) => field.name);
      if (isUnionType(type) || isInterfaceType(type))
        for (const member of schema.getPossibleTypes(type)) visit(member.name);
      for (const field of fields) visit(getNamedType(field.type).name);
    };
    visit('Profile');
    expect(reachable).toEqual(PROFILE_FIELDS);
  });
});
