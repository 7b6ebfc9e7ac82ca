/**
 * The change feed as clients read it: `GET /api/changes` and GraphQL `changes`, the same service
 * function behind both, on every test database. Shapes and orders of the contract, `next` and
 * `endCursor` that never skip or repeat an entry, the filters, `after=now`, every error (400 /
 * BAD_USER_INPUT, 410 / CURSOR_EXPIRED), the budget, and no caching.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { pruneLog } from '../src/db/change-log.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { postGraphQL } from './support/graphql-client.js';

interface RestChange {
  cursor: string;
  name: string;
  kind: 'created' | 'updated' | 'removed';
  at: string;
}
interface RestPage {
  changes: RestChange[];
  next: string;
  hasMore: boolean;
}

const namespace = (name: string) => ({ kind: 'namespace', name, ownerEmail: `owner@${name}.example` });
const profile = (name: string, description = '') => ({
  kind: 'profile',
  name,
  creatorEmail: 'x@example.com',
  description,
});

const CHANGES_QUERY = `query Changes($after: String, $first: Int, $names: [String!], $namespace: String) {
  changes(after: $after, first: $first, names: $names, namespace: $namespace) {
    edges { cursor node { name kind at profile { name description } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

describe.each(databaseKinds())('the change feed on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  /** The end of the log before the suite's own changes. */
  let start: string;

  const get = async (query: string) => {
    const response = await fetch(`${server.url}/api/changes${query}`);
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as RestPage & { error?: string },
    };
  };
  const graphql = (variables: Record<string, unknown>) =>
    postGraphQL(fetch, `${server.url}/graphql`, CHANGES_QUERY, variables);
  /** Every page after `after`, following `next`, in pages of `limit`. */
  const follow = async (after: string, limit: number, filter = '') => {
    const changes: RestChange[] = [];
    for (let cursor = after; ; ) {
      const { body } = await get(`?after=${cursor}&limit=${limit}${filter}`);
      changes.push(...body.changes);
      cursor = body.next;
      if (!body.hasMore) return { changes, next: cursor };
    }
  };

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    expect((await importLines(handle.db, ndjson(namespace('feed'), namespace('elsewhere')))).ok).toBe(true);
    server = await startTestServer(handle, { PROFILE_LIMIT: '1000', PROFILE_CACHE_SIZE: '0' });
    start = (await get('?after=now')).body.next;
    await importLines(handle.db, ndjson(profile('ada@feed', 'One'), profile('bob@feed', 'One')));
    await importLines(handle.db, ndjson(profile('cy@elsewhere', 'One')));
    await importLines(handle.db, ndjson(profile('ada@feed', 'Two')));
    await importLines(handle.db, ndjson({ kind: 'remove', name: 'bob@feed' }));
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('answers the contract: the changes oldest first, `next` and `hasMore`, never cached', async () => {
    const { status, headers, body } = await get(`?after=${start}`);
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(headers.get('ratelimit-limit')).toBe('1000');
    expect(Object.keys(body)).toEqual(['changes', 'next', 'hasMore']);
    expect(body.changes.map(({ name, kind: change }) => `${change} ${name}`)).toEqual([
      expect.stringMatching(/^created (ada|bob)@feed$/),
      expect.stringMatching(/^created (ada|bob)@feed$/),
      'created cy@elsewhere',
      'updated ada@feed',
      'removed bob@feed',
    ]);
    for (const change of body.changes) {
      expect(Object.keys(change)).toEqual(['cursor', 'name', 'kind', 'at']);
      expect(change.cursor).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      expect(change.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(body).toMatchObject({ next: body.changes.at(-1)?.cursor, hasMore: false });
  });

  it('pages by `next` without skipping or repeating, whatever the page size', async () => {
    const all = (await get(`?after=${start}`)).body.changes;
    for (const limit of [1, 2, 3]) expect((await follow(start, limit)).changes).toEqual(all);
    // A page after the last change is empty, and `next` stays where it was.
    const last = all.at(-1)?.cursor ?? '';
    expect((await get(`?after=${last}`)).body).toEqual({ changes: [], next: last, hasMore: false });
  });

  it('starts at the oldest change kept without `after`, and at the end with `after=now`', async () => {
    const oldest = await get('?limit=1000');
    expect(oldest.body.changes.length).toBeGreaterThanOrEqual(5);
    const now = await get('?after=now');
    expect(now.body).toEqual({ changes: [], next: oldest.body.next, hasMore: false });
    await importLines(handle.db, ndjson(profile('dot@feed', 'One')));
    expect((await get(`?after=${now.body.next}`)).body.changes.map((change) => change.name)).toEqual(['dot@feed']);
  });

  it('filters by names and by namespace, with `next` past the entries filtered out', async () => {
    const all = (await follow(start, 1000)).changes;
    const named = await follow(start, 1, '&names=ada@feed,Bob@FEED');
    expect(named.changes).toEqual(all.filter((change) => change.name === 'ada@feed' || change.name === 'bob@feed'));
    expect(named.next).toBe(all.at(-1)?.cursor);
    const inNamespace = await follow(start, 1000, '&namespace=elsewhere');
    expect(inNamespace.changes).toEqual(all.filter((change) => change.name.endsWith('@elsewhere')));
    expect(inNamespace.next).toBe(all.at(-1)?.cursor);
    expect((await get(`?after=${start}&names=ada@feed&names=cy@elsewhere`)).body.changes.length).toBe(3);
  });

  it("refuses what it cannot answer, with the contract's messages", async () => {
    const refused = async (query: string) => {
      const { status, headers, body } = await get(query);
      expect(headers.get('cache-control'), query).toBe('no-store');
      return { status, body };
    };
    const cursor = (await get(`?after=${start}`)).body.changes[0]?.cursor ?? '';
    for (const bad of ['x', '%20', `${cursor}x`, `${cursor}&after=${cursor}`, 'Y2wxOjE6MDE', 'Y2wxOi0xOjE']) {
      expect(await refused(`?after=${bad}`), bad).toEqual({ status: 400, body: { error: 'Invalid cursor' } });
    }
    for (const limit of ['0', '1001', 'x', '1.5', '-1']) {
      expect((await refused(`?limit=${limit}`)).status, limit).toBe(400);
    }
    expect(await refused('?names=ada@feed,nope')).toEqual({
      status: 400,
      body: { error: 'Invalid name format, expected <local>@<domain>', name: 'nope' },
    });
    const tooMany = Array.from({ length: 101 }, (_, i) => `n${i}@feed`).join(',');
    expect(await refused(`?names=${tooMany}`)).toEqual({
      status: 400,
      body: { error: 'At most 100 names per request' },
    });
    expect((await refused('?namespace=-bad-')).status).toBe(400);
    expect((await refused('?names=ada@feed&namespace=feed')).status).toBe(400);
  });

  it('draws one point of the profile budget a page', async () => {
    const limited = await startTestServer(handle, { PROFILE_LIMIT: '2' });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await fetch(`${limited.url}/api/changes?limit=1000`)).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });

  it('answers GraphQL `changes` as a Relay connection of the same entries', async () => {
    const rest = (await follow(start, 1000)).changes;
    const edges: Array<{ cursor: string; node: { name: string; kind: string; at: string; profile: unknown } }> = [];
    let after: string | null = start;
    for (;;) {
      const answer = await graphql({ after, first: 2 });
      expect(answer.body.errors).toBeUndefined();
      const connection = (
        answer.body.data as { changes: { edges: typeof edges; pageInfo: { hasNextPage: boolean; endCursor: string } } }
      ).changes;
      edges.push(...connection.edges);
      after = connection.pageInfo.endCursor;
      if (!connection.pageInfo.hasNextPage) break;
    }
    expect(
      edges.map((edge) => ({
        cursor: edge.cursor,
        name: edge.node.name,
        kind: edge.node.kind.toLowerCase(),
        at: edge.node.at,
      })),
    ).toEqual(rest);
    // The profile as it is now: ada's second version, null for the removed bob.
    const ada = edges.find((edge) => edge.node.name === 'ada@feed');
    expect(ada?.node.profile).toEqual({ name: 'ada@feed', description: 'Two' });
    expect(edges.find((edge) => edge.node.name === 'bob@feed')?.node.profile).toBeNull();
  });

  it('gives GraphQL the same errors: BAD_USER_INPUT for input, CURSOR_EXPIRED for a pruned cursor', async () => {
    const codes = async (variables: Record<string, unknown>) =>
      (await graphql(variables)).body.errors?.map((error) => [error.message, error.extensions?.code]);
    expect(await codes({ after: 'x' })).toEqual([['Invalid cursor', 'BAD_USER_INPUT']]);
    expect(await codes({ first: 0 })).toEqual([[expect.stringContaining('Invalid page size'), 'BAD_USER_INPUT']]);
    expect(await codes({ names: ['nope'] })).toEqual([
      ['Invalid name format, expected <local>@<domain>', 'BAD_USER_INPUT'],
    ]);
    // Everything is pruned: a cursor from before is older than the log keeps.
    expect(await pruneLog(handle.db, new Date(Date.now() + 60_000))).toBeGreaterThan(0);
    expect(await get(`?after=${start}`)).toMatchObject({
      status: 410,
      body: { error: 'Cursor is older than the change log keeps' },
    });
    expect(await codes({ after: start })).toEqual([['Cursor is older than the change log keeps', 'CURSOR_EXPIRED']]);
    // Where pruning stopped is still a cursor the log can continue from.
    const end = (await get('?after=now')).body.next;
    expect((await get(`?after=${end}`)).status).toBe(200);
  });
});
