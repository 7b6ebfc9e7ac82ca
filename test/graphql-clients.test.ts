/**
 * Real GraphQL client libraries against the live service, on every database kind: Apollo Client
 * (HttpLink and automatic persisted queries over GET) and urql (GET). Our own HTTP tests send
 * exactly what we think a client sends; these send what the clients really send (`__typename`
 * added to every selection, their own Accept headers, the APQ retry dance, GET URLs they build)
 * and read the answers through the clients' own result and error APIs.
 *
 * Every assertion is about what a client sees: its data and errors, and the HTTP exchanges its
 * `fetch` made (recorded by wrapping `fetch`). The server start takes an options object, so the
 * suite can run unchanged against several ways of serving /graphql (`describe.each` at the end).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ApolloClient, ApolloLink, CombinedGraphQLErrors, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { cacheExchange, fetchExchange, Client as UrqlClient, gql as urqlGql } from '@urql/core';
import { buildSchema, isAbstractType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, type DatabaseKind, databaseKinds, type TestDatabase } from './support/databases.js';
import { DEMO_RECORDS, insertGraphQLFixtures, PRIVATE_EMAILS } from './support/graphql-fixtures.js';

/** A max-age other than the default, so the header shows the configured value reaches GraphQL. */
const CACHE_MAX_AGE = 90;
const INVALID_NAME_MESSAGE = 'Invalid name format, expected <local>@<domain>';

/** How the service under test is started: the suite runs once per configuration. */
interface ServiceOptions {
  database: DatabaseKind;
  /** Configuration variables on top of the suite's own (e.g. to choose how /graphql is served). */
  env?: Record<string, string>;
  /** The path clients are pointed at; `/graphql` by default. */
  graphqlPath?: string;
}

interface RunningService {
  /** The absolute URL of the GraphQL endpoint. */
  endpoint: string;
  close(): Promise<void>;
}

/** A fresh database of `options.database` with the GraphQL fixtures, and the service on it. */
async function startService(options: ServiceOptions): Promise<RunningService> {
  const testDb: TestDatabase = await createTestDatabase(options.database);
  let handle: DatabaseHandle | undefined;
  let server: TestServer | undefined;
  const close = async (): Promise<void> => {
    await server?.close();
    await handle?.close();
    await testDb.drop();
  };
  try {
    handle = await testDb.open();
    await insertGraphQLFixtures(handle.db);
    server = await startTestServer(handle, {
      // The suite makes a handful of owner checks; the budget itself is graphql-http.test.ts's.
      OWNER_CHECK_LIMIT: '1000',
      CACHE_MAX_AGE: String(CACHE_MAX_AGE),
      ...options.env,
    });
    return { endpoint: `${server.url}${options.graphqlPath ?? '/graphql'}`, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** One HTTP exchange a client's `fetch` made, as the client saw it. */
interface Exchange {
  method: string;
  url: URL;
  /** The request body (undefined for GET). */
  requestBody: string | undefined;
  status: number;
  responseHeaders: Headers;
  responseBody: string;
}

/** A `fetch` for a client that records every exchange (the client still reads the real answer). */
function recordingFetch(): { fetch: typeof fetch; exchanges: Exchange[] } {
  const exchanges: Exchange[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const requestBody = request.body === null ? undefined : await request.clone().text();
    const response = await fetch(request);
    exchanges.push({
      method: request.method,
      url: new URL(request.url),
      requestBody,
      status: response.status,
      responseHeaders: response.headers,
      responseBody: await response.clone().text(),
    });
    return response;
  };
  return { fetch: recording, exchanges };
}

/** The GraphQL parameters of a request: from the URL (GET) or the JSON body (POST). */
function graphqlParams(exchange: Exchange): { query?: string; extensions?: unknown; variables?: unknown } {
  if (exchange.method === 'GET') {
    const param = (name: string): string | undefined => exchange.url.searchParams.get(name) ?? undefined;
    const json = (name: string): unknown => {
      const value = param(name);
      return value === undefined ? undefined : JSON.parse(value);
    };
    return { query: param('query'), extensions: json('extensions'), variables: json('variables') };
  }
  return JSON.parse(exchange.requestBody ?? '{}') as { query?: string; extensions?: unknown; variables?: unknown };
}

/** `extensions.persistedQuery` of a request (Apollo sends `clientLibrary` next to it). */
const persistedQueryOf = (extensions: unknown): { version: number; sha256Hash: string } =>
  (extensions as { persistedQuery: { version: number; sha256Hash: string } }).persistedQuery;

const errorCodesIn = (body: string): unknown[] =>
  ((JSON.parse(body) as { errors?: Array<{ extensions?: { code?: unknown } }> }).errors ?? []).map(
    (error) => error.extensions?.code,
  );

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The `possibleTypes` of Apollo's cache, derived from the committed schema as apps do it
 * (graphql-codegen's fragment matcher): without them Apollo cannot tell which inline fragments
 * of an interface or union apply, and warns that data might be lost.
 */
const POSSIBLE_TYPES: Record<string, string[]> = (() => {
  const schema = buildSchema(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8'));
  const possible: Record<string, string[]> = {};
  for (const type of Object.values(schema.getTypeMap())) {
    if (isAbstractType(type)) possible[type.name] = schema.getPossibleTypes(type).map((member) => member.name);
  }
  return possible;
})();

/** An Apollo client as an app would build it: persisted queries sent by GET, then HTTP. */
function apolloClient(endpoint: string): { client: ApolloClient; exchanges: Exchange[] } {
  const recorder = recordingFetch();
  const link = ApolloLink.from([
    // `createPersistedQueryLink` is this class's deprecated factory in Apollo Client 4.
    new PersistedQueryLink({ sha256, useGETForHashedQueries: true }),
    new HttpLink({ uri: endpoint, fetch: recorder.fetch }),
  ]);
  return {
    client: new ApolloClient({ link, cache: new InMemoryCache({ possibleTypes: POSSIBLE_TYPES }) }),
    exchanges: recorder.exchanges,
  };
}

/** The profile of a client screen: display data, traits (a union) and records by variant. */
const PROFILE_CARD_TEXT = /* GraphQL */ `
  query ProfileCard($name: String!, $size: Int) {
    profile(name: $name) {
      id
      name
      description
      level
      avatarUrl(size: $size)
      attributes {
        traitType
        value {
          ... on StringAttributeValue {
            text: value
          }
          ... on IntAttributeValue {
            number: value
          }
        }
      }
      phone: record(type: "phone") {
        ... on PhoneRecord {
          numbers
        }
      }
      records {
        key
        type
        raw
        ... on TextRecord {
          value
        }
        ... on PhoneRecord {
          numbers
        }
        ... on SocialRecord {
          twitter
          entries {
            key
            value
          }
        }
        ... on CryptoRecord {
          btc
          eth
        }
        ... on MapRecord {
          shop: entry(key: "Shop")
          entries {
            key
            value
          }
        }
      }
    }
  }
`;
const PROFILE_CARD = gql(PROFILE_CARD_TEXT);

const raw = (key: string) => DEMO_RECORDS[key]!.value;
const entries = (key: string) =>
  Object.entries(raw(key) as Record<string, string>).map(([entryKey, value]) => ({
    __typename: 'RecordEntry',
    key: entryKey,
    value,
  }));
const text = (key: string, type: string) => ({ __typename: 'TextRecord', key, type, raw: raw(key), value: raw(key) });
const map = (key: string, type: string, shop: string | null) => ({
  __typename: 'MapRecord',
  key,
  type,
  raw: raw(key),
  shop,
  entries: entries(key),
});

/** demo@me as PROFILE_CARD selects it, with the `__typename`s Apollo and urql add. */
const DEMO_CARD = {
  __typename: 'Profile',
  id: 'Profile:demo@me',
  name: 'demo@me',
  description: 'A sample profile that shows every kind of record.',
  level: 2,
  avatarUrl: expect.stringMatching(/\/api\/demo@me\/avatar\?size=64&v=[^&]+$/),
  attributes: [
    {
      __typename: 'Attribute',
      traitType: 'domain',
      value: { __typename: 'StringAttributeValue', text: 'demo@me' },
    },
    { __typename: 'Attribute', traitType: 'level', value: { __typename: 'IntAttributeValue', number: 2 } },
    { __typename: 'Attribute', traitType: 'length', value: { __typename: 'IntAttributeValue', number: 7 } },
  ],
  phone: { __typename: 'PhoneRecord', numbers: ['+15550100', '+15550111'] },
  records: [
    text('1', 'name'),
    text('2', 'email'),
    text('3', 'website'),
    { __typename: 'PhoneRecord', key: '4', type: 'phone', raw: raw('4'), numbers: ['+15550100', '+15550111'] },
    text('5', 'tg_bot'),
    { __typename: 'SocialRecord', key: '6', type: 'social', raw: raw('6'), twitter: 'demo', entries: entries('6') },
    map('7', 'link', 'https://shop.demo.example'),
    {
      __typename: 'CryptoRecord',
      key: '8',
      type: 'crypto',
      raw: raw('8'),
      btc: 'bc1qdemo0000000000000000000000000000000',
      eth: '0x0000000000000000000000000000000000dE0000',
    },
    map('9', 'notes', null),
    map('20', 'img', null),
    text('50', 'web_url'),
    text('51', 'web3_url'),
  ],
};

const PROFILE_NAMES = gql`
  query ProfileNames($names: [String!]!) {
    profiles(names: $names) {
      id
      name
      level
    }
  }
`;

const OWNER_CHECK = gql`
  query OwnerCheck($email: String, $name: String) {
    ownerCheck(email: $email, name: $name) {
      hasCreated
      email
      name
    }
  }
`;

/** The whole suite against one running service. */
function clientSuite(options: ServiceOptions): void {
  let service: RunningService;
  beforeAll(async () => {
    service = await startService(options);
  });
  afterAll(async () => {
    await service?.close();
  });

  describe('Apollo Client (HttpLink, persisted queries over GET)', () => {
    it('reads a profile with variables: fields, the attribute union and the record variants', async () => {
      const { client } = apolloClient(service.endpoint);
      const { data } = await client.query({ query: PROFILE_CARD, variables: { name: 'Demo@ME', size: 64 } });
      expect(data).toEqual({ profile: DEMO_CARD });
      // Profiles are normalised by their `id`, as the schema promises client caches.
      expect(client.cache.extract()).toHaveProperty(['Profile:Profile:demo@me', 'name'], 'demo@me');
    });

    it('sends an unknown document as a GET with only its hash, then registers it, then reads it by hash alone', async () => {
      // A document of its own, so no other test has registered its hash on this server.
      const query = gql`
        query PersistedProfile($name: String!) {
          profile(name: $name) {
            name
            level
          }
        }
      `;
      const variables = { name: 'odd@me' };
      const expected = { profile: { __typename: 'Profile', name: 'odd@me', level: 5 } };

      const first = apolloClient(service.endpoint);
      expect((await first.client.query({ query, variables })).data).toEqual(expected);
      const [miss, registration, ...rest] = first.exchanges;
      expect(rest).toEqual([]);

      // The hash alone, by GET: the service does not know it.
      expect(miss!.method).toBe('GET');
      const missParams = graphqlParams(miss!);
      expect(missParams.query).toBeUndefined();
      expect(missParams.variables).toEqual(variables);
      const hash = persistedQueryOf(missParams.extensions).sha256Hash;
      expect(persistedQueryOf(missParams.extensions)).toEqual({
        version: 1,
        sha256Hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(errorCodesIn(miss!.responseBody)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
      // A shared cache must not keep the miss, or every later GET by this hash would miss too.
      expect(miss!.responseHeaders.get('cache-control')).toBe('no-store');

      // The registration, by POST as the link does it: the document (as Apollo prints it, with
      // __typename) and its hash.
      expect(registration!.method).toBe('POST');
      const registered = graphqlParams(registration!);
      expect(registered.query).toContain('__typename');
      expect(sha256(registered.query!)).toBe(hash);
      expect(persistedQueryOf(registered.extensions)).toEqual({ version: 1, sha256Hash: hash });
      expect(registered.variables).toEqual(variables);
      expect(registration!.status).toBe(200);
      expect(JSON.parse(registration!.responseBody)).toEqual({ data: expected });

      // Another client, cache empty, same document: one GET with the hash alone, answered.
      const second = apolloClient(service.endpoint);
      expect((await second.client.query({ query, variables })).data).toEqual(expected);
      expect(second.exchanges).toHaveLength(1);
      const [byHash] = second.exchanges;
      expect(byHash!.method).toBe('GET');
      const byHashParams = graphqlParams(byHash!);
      expect(byHashParams.query).toBeUndefined();
      expect(persistedQueryOf(byHashParams.extensions)).toEqual({ version: 1, sha256Hash: hash });
      expect(byHashParams.variables).toEqual(variables);
      expect(byHash!.status).toBe(200);
      expect(JSON.parse(byHash!.responseBody)).toEqual({ data: expected });
      // What hashed GETs are for: an answer HTTP caches may keep (docs/graphql.md).
      expect(byHash!.responseHeaders.get('cache-control')).toBe(`public, max-age=${CACHE_MAX_AGE}`);
      expect(byHash!.responseHeaders.get('etag')).toMatch(/^"[\w-]+"$/);
    });

    it('surfaces an invalid name as a GraphQL error with BAD_USER_INPUT through Apollo’s error API', async () => {
      const { client } = apolloClient(service.endpoint);
      // Apollo's default error policy rejects the query with the server's errors.
      const rejection: unknown = await client.query({ query: PROFILE_CARD, variables: { name: 'no name' } }).then(
        () => 'resolved',
        (error: unknown) => error,
      );
      expect(CombinedGraphQLErrors.is(rejection)).toBe(true);
      const { errors } = rejection as CombinedGraphQLErrors;
      expect(errors).toMatchObject([
        { message: INVALID_NAME_MESSAGE, path: ['profile'], extensions: { code: 'BAD_USER_INPUT' } },
      ]);

      // With `errorPolicy: 'all'` the client gets the partial data and the same error.
      const { client: tolerant } = apolloClient(service.endpoint);
      const answer = await tolerant.query({
        query: PROFILE_CARD,
        variables: { name: 'no name' },
        errorPolicy: 'all',
      });
      expect(answer.data).toEqual({ profile: null });
      expect(CombinedGraphQLErrors.is(answer.error)).toBe(true);
      expect((answer.error as CombinedGraphQLErrors).errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    });

    it('reads profiles(names:) in the order asked, null where there is none', async () => {
      const { client } = apolloClient(service.endpoint);
      const { data } = await client.query({
        query: PROFILE_NAMES,
        variables: { names: ['x@other', 'nobody@me', 'DEMO@me', 'josé@café', 'empty@me'] },
      });
      expect(data).toEqual({
        profiles: [
          { __typename: 'Profile', id: 'Profile:x@other', name: 'x@other', level: 0 },
          null,
          { __typename: 'Profile', id: 'Profile:demo@me', name: 'demo@me', level: 2 },
          { __typename: 'Profile', id: 'Profile:josé@café', name: 'josé@café', level: 0 },
          { __typename: 'Profile', id: 'Profile:empty@me', name: 'empty@me', level: 0 },
        ],
      });
    });

    it('runs ownerCheck: true for the creator, false for anyone else, and a bad e-mail is BAD_USER_INPUT', async () => {
      const { client } = apolloClient(service.endpoint);
      const creator = await client.query({
        query: OWNER_CHECK,
        variables: { email: PRIVATE_EMAILS.demoCreator, name: 'demo@me' },
      });
      expect(creator.data).toEqual({
        ownerCheck: {
          __typename: 'OwnerCheckResult',
          hasCreated: true,
          email: PRIVATE_EMAILS.demoCreator,
          name: 'demo@me',
        },
      });
      const stranger = await client.query({
        query: OWNER_CHECK,
        variables: { email: 'someone@example.com', name: 'DEMO@me' },
      });
      // The check echoes what the client sent (docs/security.md), not the canonical name.
      expect(stranger.data).toEqual({
        ownerCheck: {
          __typename: 'OwnerCheckResult',
          hasCreated: false,
          email: 'someone@example.com',
          name: 'DEMO@me',
        },
      });
      const bad = await client.query({
        query: OWNER_CHECK,
        variables: { email: 'not an e-mail', name: 'demo@me' },
        errorPolicy: 'all',
      });
      expect(bad.data).toEqual({ ownerCheck: null });
      expect((bad.error as CombinedGraphQLErrors).errors).toMatchObject([
        { message: 'Invalid email format', extensions: { code: 'BAD_USER_INPUT' } },
      ]);
    });
  });

  describe('urql (GET)', () => {
    function urqlClient(endpoint: string): { client: UrqlClient; exchanges: Exchange[] } {
      const recorder = recordingFetch();
      const client = new UrqlClient({
        url: endpoint,
        exchanges: [cacheExchange, fetchExchange],
        preferGetMethod: 'force',
        fetch: recorder.fetch,
        requestPolicy: 'network-only',
      });
      return { client, exchanges: recorder.exchanges };
    }

    const PROFILE_CARD_URQL = urqlGql(PROFILE_CARD_TEXT);

    it('reads a profile with variables by GET, answered with the profile caching headers', async () => {
      const { client, exchanges } = urqlClient(service.endpoint);
      const result = await client.query(PROFILE_CARD_URQL, { name: 'demo@ME', size: 64 }).toPromise();
      expect(result.error).toBeUndefined();
      expect(result.data).toEqual({ profile: DEMO_CARD });

      expect(exchanges).toHaveLength(1);
      const [exchange] = exchanges;
      expect(exchange!.method).toBe('GET');
      expect(exchange!.requestBody).toBeUndefined();
      expect(graphqlParams(exchange!).variables).toEqual({ name: 'demo@ME', size: 64 });
      expect(exchange!.status).toBe(200);
      // docs/graphql.md: GET answers reading only public profile data are cacheable.
      expect(exchange!.responseHeaders.get('cache-control')).toBe(`public, max-age=${CACHE_MAX_AGE}`);
      expect(exchange!.responseHeaders.get('etag')).toMatch(/^"[\w-]+"$/);
      expect(exchange!.responseHeaders.get('vary')).toMatch(/\bAccept\b/i);

      // The same question asked again gets the same validator, so a cache can revalidate it.
      const again = urqlClient(service.endpoint);
      const repeated = await again.client.query(PROFILE_CARD_URQL, { name: 'demo@ME', size: 64 }).toPromise();
      expect(repeated.data).toEqual(result.data);
      expect(again.exchanges[0]!.responseHeaders.get('etag')).toBe(exchange!.responseHeaders.get('etag'));
      // A different answer gets a different one.
      const other = await again.client.query(PROFILE_CARD_URQL, { name: 'odd@me', size: 64 }).toPromise();
      expect(other.data?.profile?.name).toBe('odd@me');
      expect(again.exchanges[1]!.responseHeaders.get('etag')).not.toBe(exchange!.responseHeaders.get('etag'));
    });

    it('reports an invalid name as BAD_USER_INPUT through urql’s CombinedError, and the answer is not cacheable', async () => {
      const { client, exchanges } = urqlClient(service.endpoint);
      const result = await client.query(PROFILE_CARD_URQL, { name: 'no name', size: 64 }).toPromise();
      expect(result.data).toEqual({ profile: null });
      expect(result.error?.networkError).toBeUndefined();
      expect(result.error?.graphQLErrors.map((error) => [error.message, error.extensions.code])).toEqual([
        [INVALID_NAME_MESSAGE, 'BAD_USER_INPUT'],
      ]);

      expect(exchanges.map((exchange) => exchange.method)).toEqual(['GET']);
      expect(exchanges[0]!.responseHeaders.get('cache-control')).toBe('no-store');
      expect(exchanges[0]!.responseHeaders.get('etag')).toBeNull();
    });

    it('gets a not-cacheable GET answer for an owner check', async () => {
      const { client, exchanges } = urqlClient(service.endpoint);
      const result = await client
        .query(
          urqlGql`
            query UrqlOwnerCheck($email: String, $name: String) {
              ownerCheck(email: $email, name: $name) {
                hasCreated
              }
            }
          `,
          { email: PRIVATE_EMAILS.meOwner, name: 'self@me' },
        )
        .toPromise();
      expect(result.error).toBeUndefined();
      expect(result.data).toEqual({ ownerCheck: { __typename: 'OwnerCheckResult', hasCreated: true } });
      expect(exchanges.map((exchange) => exchange.method)).toEqual(['GET']);
      expect(exchanges[0]!.responseHeaders.get('cache-control')).toBe('no-store');
      expect(exchanges[0]!.responseHeaders.get('etag')).toBeNull();
    });
  });
}

describe.each(databaseKinds())('GraphQL client libraries against /graphql on %s', (database) => {
  clientSuite({ database });
});
