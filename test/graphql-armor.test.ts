/**
 * Query limits of `/graphql` (src/graphql/execution/graphql-armor.ts, request-body-limit.ts) on the real
 * schema and server: the heaviest legitimate documents pass, each limit refuses a document one
 * step past it with an ordinary GraphQL error, field suggestions disappear in production, and
 * request bodies and batches are bounded.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/database.js';
import {
  MAX_ALIASES,
  MAX_COST,
  MAX_DEPTH,
  MAX_DIRECTIVES,
  MAX_TOKENS,
} from '../src/graphql/execution/graphql-armor.js';
import { GRAPHIQL_EXAMPLE_QUERY } from '../src/graphql/graphiql/graphiql-example.js';
import { MAX_REQUEST_BODY_BYTES } from '../src/graphql/transport/request-body-limit.js';
import { requestBodyTooLargeMessage } from '../src/http/request-body.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { errorCodes, type GraphQLAnswer, postGraphQL } from './support/graphql-client.js';
import { bulkName, insertGraphQLFixtures } from './support/graphql-fixtures.js';
import { type GraphQLTestService, serviceOn } from './support/graphql-server.js';

/**
 * The deepest selection a real client sends (README), for one `profiles` field. The two `value`
 * fields of the attribute union need aliases: a String! and an Int! under one response name is
 * a validation error (graphql-js's OverlappingFieldsCanBeMerged), as in GraphiQL's example.
 */
const profilesSelection = (names: string[]) => `profiles(names: ${JSON.stringify(names)}) {
    name
    attributes { traitType value { ... on StringAttributeValue { text: value } ... on IntAttributeValue { number: value } } }
    records { key type raw ... on SocialRecord { entries { key value } twitter } }
  }`;
const OWNER_CHECK = 'ownerCheck(email: "a@b.c", name: "x@y") { hasCreated email name }';
const LEGITIMATE_QUERY = `{ ${profilesSelection(['demo@me'])} ${OWNER_CHECK} }`;

/** 100 names: the fixture's bulk profiles and some that do not exist. */
const HUNDRED_NAMES = Array.from({ length: 100 }, (_, i) => (i < 60 ? bulkName(i) : `missing${i}@bulk`));

/** GraphiQL's example selection of one profile (it uses aliases of its own). */
const GRAPHIQL_PROFILE_SELECTION = /profile\(name: "demo@me"\) (\{[\s\S]*?\n {2}\})\n {2}ownerCheck/.exec(
  GRAPHIQL_EXAMPLE_QUERY,
)?.[1];

const repeat = (count: number, make: (i: number) => string) =>
  Array.from({ length: count }, (_, i) => make(i)).join('\n');

describe('GraphQL query limits', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  const services: GraphQLTestService[] = [];

  /** `/graphql` on a port of its own, configured like `npm start` with `env`. */
  async function serve(env: Record<string, string>): Promise<string> {
    const service = await serviceOn(handle, { PROFILE_LIMIT: '0', ...env });
    services.push(service);
    return service.graphqlUrl;
  }

  let testUrl: string;
  let productionUrl: string;
  const gql = (query: string, url = testUrl): Promise<GraphQLAnswer> => postGraphQL(fetch, url, query);

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await insertGraphQLFixtures(handle.db);
    testUrl = await serve({ NODE_ENV: 'test' });
    productionUrl = await serve({ NODE_ENV: 'production' });
  });

  afterAll(async () => {
    await Promise.all(services.map((service) => service.close()));
    await handle?.close();
    await testDb?.drop();
  });

  /** A refusal: a 400 whose only error names the limit, and nothing executed. */
  function expectRefused(answer: GraphQLAnswer, code: string, message: RegExp): void {
    expect(answer.status).toBe(400);
    expect(answer.body.data ?? null).toBeNull();
    expect(errorCodes(answer.body)).toEqual([code]);
    expect(answer.body.errors?.[0]?.message).toMatch(message);
  }

  function expectAnswered(answer: GraphQLAnswer): void {
    expect(answer.body.errors ?? []).toEqual([]);
    expect(answer.status).toBe(200);
  }

  describe('legitimate documents pass', () => {
    it('the deepest query a client sends', async () => {
      const answer = await gql(LEGITIMATE_QUERY);
      expectAnswered(answer);
      const data = answer.body.data as { profiles: Array<{ name: string; records: unknown[] }> };
      expect(data.profiles[0]?.name).toBe('demo@me');
      expect(data.profiles[0]?.records).toHaveLength(12);
    });

    it('the same query with 15 aliases of 100 names each, in production too', async () => {
      const query = `{ ${repeat(15, (i) => `a${i}: ${profilesSelection(HUNDRED_NAMES)}`)} ${OWNER_CHECK} }`;
      expect(Buffer.byteLength(JSON.stringify({ query }))).toBeLessThan(MAX_REQUEST_BODY_BYTES);
      for (const url of [testUrl, productionUrl]) {
        const answer = await gql(query, url);
        expectAnswered(answer);
        expect((answer.body.data as Record<string, unknown[]>).a14).toHaveLength(100);
      }
    });

    it("GraphiQL's example, and its profile selection for 15 aliased profiles", async () => {
      expectAnswered(await gql(GRAPHIQL_EXAMPLE_QUERY));
      expect(GRAPHIQL_PROFILE_SELECTION).toBeDefined();
      const page = `{ ${repeat(15, (i) => `p${i}: profile(name: "${bulkName(i)}") ${GRAPHIQL_PROFILE_SELECTION}`)} ${OWNER_CHECK} }`;
      expectAnswered(await gql(page));
    });

    it('the deepest query written with named fragments', async () => {
      const query = `{ profiles(names: ["demo@me"]) { ...Card } }
        fragment Card on Profile { name attributes { ...Trait } records { ...Record } }
        fragment Trait on Attribute { traitType value { ...Value } }
        fragment Value on AttributeValue { ... on StringAttributeValue { text: value } ... on IntAttributeValue { number: value } }
        fragment Record on ProfileRecord { key type raw ...Social }
        fragment Social on SocialRecord { entries { ...Entry } twitter }
        fragment Entry on RecordEntry { key value }`;
      expectAnswered(await gql(query));
    });

    it("GraphiQL's schema introspection", async () => {
      const answer = await gql(
        '{ __schema { types { name fields { name type { name kind ofType { name kind ofType { name kind } } } } } } }',
      );
      expectAnswered(answer);
    });
  });

  describe('each limit refuses a document one step past it', () => {
    /** `__type` nests `ofType` as deep as asked: the one way to go deep in this schema. */
    const typeDepth = (depth: number) =>
      `{ __type(name: "Profile") { fields { type { ${'ofType { '.repeat(depth - 4)}name${' }'.repeat(depth - 4)} } } } }`;

    it(`depth ${MAX_DEPTH}`, async () => {
      expectAnswered(await gql(typeDepth(MAX_DEPTH)));
      expectRefused(await gql(typeDepth(MAX_DEPTH + 1)), 'GRAPHQL_VALIDATION_FAILED', /depth limit of 10 exceeded/);
    });

    it(`${MAX_ALIASES} aliases`, async () => {
      const aliases = (count: number) => `{ profile(name: "demo@me") { ${repeat(count, (i) => `n${i}: name`)} } }`;
      expectAnswered(await gql(aliases(MAX_ALIASES)));
      expectRefused(await gql(aliases(MAX_ALIASES + 1)), 'GRAPHQL_VALIDATION_FAILED', /Aliases limit of 64 exceeded/);
      // __typename too: graphql-armor would let any number of its aliases through.
      const typenames = (count: number) => `{ ${repeat(count, (i) => `t${i}: __typename`)} }`;
      expectAnswered(await gql(typenames(MAX_ALIASES)));
      expectRefused(await gql(typenames(MAX_ALIASES + 1)), 'GRAPHQL_VALIDATION_FAILED', /Aliases limit of 64 exceeded/);
    });

    it(`${MAX_DIRECTIVES} directives`, async () => {
      const directives = (count: number) =>
        `{ profile(name: "demo@me") { ${repeat(count, () => 'name @include(if: true)')} } }`;
      expectAnswered(await gql(directives(MAX_DIRECTIVES)));
      expectRefused(
        await gql(directives(MAX_DIRECTIVES + 1)),
        'GRAPHQL_VALIDATION_FAILED',
        /Directives limit of 64 exceeded/,
      );
    });

    it(`${MAX_TOKENS} tokens`, async () => {
      // 12 tokens around the list, one per name (commas are not tokens). Past 100 names the
      // resolver refuses the list: proof that the parser let the document through.
      const tokens = (count: number) => `{ profiles(names: [${repeat(count - 12, () => '"x@y",')}]) { name } }`;
      const atLimit = await gql(tokens(MAX_TOKENS));
      expect(errorCodes(atLimit.body)).toEqual(['BAD_USER_INPUT']);
      expectRefused(await gql(tokens(MAX_TOKENS + 1)), 'GRAPHQL_PARSE_FAILED', /Token limit of 5000 exceeded/);
    });

    it(`cost ${MAX_COST}, without going past any other limit`, async () => {
      // Identical fields merge, so this needs no aliases; each repetition costs about 26.
      const costly = (count: number) =>
        `{ ${repeat(count, () => 'profile(name: "demo@me") { records { ... on SocialRecord { entries { key value } } } }')} }`;
      expectAnswered(await gql(costly(180)));
      expectRefused(await gql(costly(200)), 'GRAPHQL_VALIDATION_FAILED', /Cost limit of 5000 exceeded/);
    });
  });

  describe('field suggestions', () => {
    const typo = '{ profil(name: "demo@me") { name } }';

    it('are shown during development', async () => {
      const answer = await gql(typo);
      expect(answer.body.errors?.[0]?.message).toContain('Did you mean "profile"');
    });

    it('are hidden in production', async () => {
      const answer = await gql(typo, productionUrl);
      expect(answer.status).toBe(400);
      expect(answer.body.errors?.[0]?.message).toContain('Cannot query field "profil"');
      expect(answer.text).not.toContain('Did you mean');
      expect(answer.text).not.toContain('"profile"');
    });
  });

  describe('request bodies', () => {
    /** A POST with a JSON body of exactly `size` bytes whose query would pass every other limit. */
    const bodyOfSize = (size: number) => {
      const start = '{"query":"{ __typename }","variables":{"pad":"';
      const end = '"}}';
      return start + 'x'.repeat(size - start.length - end.length) + end;
    };

    /** Sends with Content-Length, or chunked (no length known up front) when `chunked`. */
    function send(body: string, chunked: boolean): Promise<{ status: number; type: string; text: string }> {
      return new Promise((resolve, reject) => {
        const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
        if (!chunked) headers['content-length'] = String(Buffer.byteLength(body));
        const req = request(testUrl, { method: 'POST', headers, agent: false }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text }),
          );
        });
        req.on('error', reject);
        // Several writes, so a chunked request really arrives in chunks.
        for (let offset = 0; offset < body.length; offset += 8192) req.write(body.slice(offset, offset + 8192));
        req.end();
      });
    }

    for (const chunked of [false, true]) {
      const how = chunked ? 'chunked' : 'with Content-Length';
      it(`up to ${MAX_REQUEST_BODY_BYTES} bytes are read (${how})`, async () => {
        const answer = await send(bodyOfSize(MAX_REQUEST_BODY_BYTES), chunked);
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.text)).toEqual({ data: { __typename: 'Query' } });
      });

      it(`one byte more is refused with 413 and a JSON error (${how})`, async () => {
        const answer = await send(bodyOfSize(MAX_REQUEST_BODY_BYTES + 1), chunked);
        expect(answer.status).toBe(413);
        expect(answer.type).toMatch(/^application\/json/);
        expect(JSON.parse(answer.text)).toEqual({ error: requestBodyTooLargeMessage(MAX_REQUEST_BODY_BYTES) });
      });
    }

    it('a body of several megabytes is refused without being read whole', async () => {
      const answer = await send(bodyOfSize(5 * 1024 * 1024), true);
      expect(answer.status).toBe(413);
    });
  });

  describe('batching', () => {
    it('is off: a JSON array of operations is refused and none of them runs', async () => {
      const batchUrl = await serve({ NODE_ENV: 'test', OWNER_CHECK_LIMIT: '1' });
      const response = await fetch(batchUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify([{ query: `{ ${OWNER_CHECK} }` }, { query: `{ ${OWNER_CHECK} }` }]),
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { errors?: unknown[] };
      expect(body.errors?.length).toBeGreaterThan(0);

      // The one owner check this server allows is still there.
      expectAnswered(await gql(`{ ${OWNER_CHECK} }`, batchUrl));
    });
  });
});
