/**
 * The change feed as a GraphQL client library pages it: Apollo Client with its
 * `relayStylePagination()` field policy, `fetchMore` with `endCursor` until `hasNextPage` is false,
 * the pages merged in its cache. The cache must end up with every change once, in the order
 * `GET /api/changes` gives them, also for a filtered connection (its own cache entry) and after a
 * change made while paging.
 */
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';

const CHANGES = gql`
  query Changes($after: String, $first: Int, $namespace: String) {
    changes(after: $after, first: $first, namespace: $namespace) {
      edges {
        cursor
        node {
          name
          kind
          at
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`;

interface ChangesData {
  changes: {
    edges: Array<{ cursor: string; node: { name: string; kind: string; at: string } }>;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}

const namespace = (name: string) => ({ kind: 'namespace', name, ownerEmail: `owner@${name}.example` });
const profile = (name: string, description: string) => ({
  kind: 'profile',
  name,
  creatorEmail: 'x@example.com',
  description,
});

describe.each(databaseKinds())('Apollo Client paging the change feed on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;

  const client = () =>
    new ApolloClient({
      link: new HttpLink({ uri: `${server.url}/graphql` }),
      cache: new InMemoryCache({
        typePolicies: { Query: { fields: { changes: relayStylePagination(['namespace']) } } },
      }),
    });

  /** Every change through REST, following `next`: what the client's cache must hold. */
  const viaRest = async (filter = '') => {
    const all: Array<{ cursor: string; name: string; kind: string; at: string }> = [];
    for (let after = ''; ; ) {
      const page = (await (await fetch(`${server.url}/api/changes?limit=1000${filter}${after}`)).json()) as {
        changes: typeof all;
        next: string;
        hasMore: boolean;
      };
      all.push(...page.changes);
      after = `&after=${page.next}`;
      if (!page.hasMore) return all;
    }
  };

  /** Pages through with fetchMore until the last page; what the cache merged. */
  const pageAll = async (variables: Record<string, unknown>, duringPaging?: () => Promise<void>) => {
    const apollo = client();
    try {
      const watch = apollo.watchQuery<ChangesData>({ query: CHANGES, variables: { first: 2, ...variables } });
      const subscription = watch.subscribe(() => {});
      let { data } = await apollo.query<ChangesData>({ query: CHANGES, variables: { first: 2, ...variables } });
      let pages = 1;
      for (;;) {
        const current = apollo.readQuery<ChangesData>({ query: CHANGES, variables: { first: 2, ...variables } });
        const info = current?.changes.pageInfo ?? data?.changes.pageInfo;
        if (info === undefined || !info.hasNextPage) break;
        if (pages === 2) await duringPaging?.();
        ({ data } = await watch.fetchMore({ variables: { after: info.endCursor } }));
        pages += 1;
      }
      const merged = apollo.readQuery<ChangesData>({ query: CHANGES, variables: { first: 2, ...variables } });
      subscription.unsubscribe();
      return { merged: merged?.changes.edges ?? [], pages };
    } finally {
      apollo.stop();
    }
  };

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    expect((await importLines(handle.db, ndjson(namespace('ac'), namespace('other')))).ok).toBe(true);
    for (let i = 0; i < 5; i += 1) {
      await importLines(handle.db, ndjson(profile(`p${i}@ac`, 'one'), profile(`q${i}@other`, 'one')));
    }
    server = await startTestServer(handle, { PROFILE_LIMIT: '0' });
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('merges every page into one list: each change once, in log order', async () => {
    const { merged, pages } = await pageAll({});
    expect(pages).toBeGreaterThan(3);
    const flat = merged.map(({ cursor, node }) => ({
      cursor,
      name: node.name,
      kind: node.kind.toLowerCase(),
      at: node.at,
    }));
    expect(flat).toEqual(await viaRest());
  });

  it('pages a namespace on its own, and takes in a change made while it pages', async () => {
    const { merged } = await pageAll({ namespace: 'ac' }, async () => {
      await importLines(handle.db, ndjson(profile('p0@ac', 'two')));
    });
    const names = merged.map((edge) => `${edge.node.kind} ${edge.node.name}`);
    expect(names).toEqual(
      (await viaRest('&namespace=ac')).map((change) => `${change.kind.toUpperCase()} ${change.name}`),
    );
    expect(names.at(-1)).toBe('UPDATED p0@ac');
  });
});
