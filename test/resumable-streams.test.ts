/**
 * Streams that resume where they left off, with real clients: the `eventsource` package's
 * EventSource (the WHATWG EventSource for Node, not our own reader) on the REST streams, and
 * graphql-ws's client for `profileChanged(after:)`. The EventSource loses its connection while
 * changes are made (the socket is cut by a TCP proxy; the server is stopped and another started
 * in its place) and reconnects by itself with `Last-Event-ID`: it must end up with every change,
 * each name's latest state, ids in log order, and never a state older than one it had.
 */
import { EventSource } from 'eventsource';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { importLines } from '../src/data/importer.js';
import { pruneLog } from '../src/db/change-log.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { GRAPHQL_PATH_RERUN, startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { readMetrics } from './support/metrics.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

const namespace = (name: string) => ({ kind: 'namespace', name, ownerEmail: `owner@${name}.example` });
const profile = (name: string, description: string) => ({
  kind: 'profile',
  name,
  creatorEmail: 'x@example.com',
  description,
});
const remove = (name: string) => ({ kind: 'remove', name });

interface Seen {
  type: string;
  id: string;
  name: string;
  description: string | undefined;
}

/** An EventSource and what it received, with the ids the server gave. */
function watch(url: string) {
  const source = new EventSource(url);
  const seen: Seen[] = [];
  let opened = 0;
  source.addEventListener('open', () => {
    opened += 1;
  });
  for (const type of ['profile', 'deleted', 'reset']) {
    source.addEventListener(type, (message) => {
      const data = JSON.parse(message.data) as { name?: string; namespace?: string; description?: string };
      seen.push({
        type,
        id: message.lastEventId,
        name: data.name ?? data.namespace ?? '',
        description: data.description,
      });
    });
  }
  return {
    source,
    seen,
    opens: () => opened,
    /** The last state received of each name. */
    latest: () => new Map(seen.map((event) => [event.name, event.type === 'deleted' ? 'deleted' : event.description])),
  };
}

/** The change log's cursors, in log order, as GET /api/changes gives them. */
async function cursorsOf(server: TestServer): Promise<string[]> {
  const cursors: string[] = [];
  for (let after = ''; ; ) {
    const page = (await (await fetch(`${server.url}/api/changes?limit=1000${after}`)).json()) as {
      changes: Array<{ cursor: string }>;
      next: string;
      hasMore: boolean;
    };
    cursors.push(...page.changes.map((change) => change.cursor));
    after = `&after=${page.next}`;
    if (!page.hasMore) return cursors;
  }
}

/** Ids in log order: each later in the log than the one before. */
function inLogOrder(ids: readonly string[], log: readonly string[]): boolean {
  const positions = ids.map((id) => log.indexOf(id));
  return positions.every(
    (position, index) => position >= 0 && (index === 0 || position > (positions[index - 1] ?? -1)),
  );
}

describe.skipIf(GRAPHQL_PATH_RERUN).each(databaseKinds())('resumable streams on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let proxy: TcpProxy;
  /** Where the proxy forwards: the server of the moment. */
  const upstream = { host: '127.0.0.1', port: 0 };
  const env = { PROFILE_LIMIT: '0', PROFILE_CACHE_SIZE: '0' };
  /** The server's base URL through the proxy (no trailing slash). */
  const through = () => proxy.urlThrough(server.url).replace(/\/$/, '');
  const apply = async (...lines: object[]) => expect((await importLines(handle.db, ndjson(...lines))).ok).toBe(true);

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await apply(namespace('rs'), namespace('far'), profile('ada@rs', 'v1'), profile('bob@rs', 'v1'));
    server = await startTestServer(handle, env);
    upstream.port = Number(new URL(server.url).port);
    proxy = await startTcpProxy(upstream);
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('EventSource on one profile: cut while changes are made, it resumes by itself with every change', async () => {
    const client = watch(`${through()}/api/ada@rs/events`);
    try {
      await eventually(() => client.opens() === 1, 'the stream open');
      await apply(profile('ada@rs', 'v2'));
      await eventually(() => client.seen.length === 1, 'the first change');
      proxy.cut('refuse');
      await apply(profile('ada@rs', 'v3'));
      await apply(profile('ada@rs', 'v4'));
      proxy.restore();
      await eventually(() => client.latest().get('ada@rs') === 'v4', 'the state after the cut');
      await apply(profile('ada@rs', 'v5'));
      await eventually(() => client.latest().get('ada@rs') === 'v5', 'the live change after it');
      expect(client.opens()).toBe(2);
      // The missed changes arrive as one event of the name's current state, with its latest id.
      expect(client.seen.map((event) => event.description)).toEqual(['v2', 'v4', 'v5']);
      const log = await cursorsOf(server);
      expect(
        inLogOrder(
          client.seen.map((event) => event.id),
          log,
        ),
      ).toBe(true);
      expect(client.seen.at(-1)?.id).toBe(log.at(-1));
    } finally {
      client.source.close();
    }
  }, 30_000);

  it('EventSource on many names: the server is stopped and another started while names change and one is removed', async () => {
    const client = watch(`${through()}/api/changes/events?names=ada@rs,bob@rs,cy@rs`);
    try {
      await eventually(() => client.opens() === 1, 'the stream open');
      await apply(profile('bob@rs', 'v2'));
      await eventually(() => client.seen.length === 1, 'the first change');
      await server.close();
      await apply(profile('cy@rs', 'v1'), profile('ada@rs', 'v6'));
      await apply(remove('bob@rs'));
      await apply(profile('cy@rs', 'v2'));
      server = await startTestServer(handle, env);
      upstream.port = Number(new URL(server.url).port);
      await eventually(() => client.latest().get('cy@rs') === 'v2', 'the changes made while no server ran');
      expect(client.latest()).toEqual(
        new Map<string, string | undefined>([
          ['bob@rs', 'deleted'],
          ['cy@rs', 'v2'],
          ['ada@rs', 'v6'],
        ]),
      );
      // One event per name that changed, in the order of their latest changes: ada, bob, cy.
      expect(client.seen.slice(1).map((event) => `${event.type} ${event.name}`)).toEqual([
        'profile ada@rs',
        'deleted bob@rs',
        'profile cy@rs',
      ]);
      expect(
        inLogOrder(
          client.seen.map((event) => event.id),
          await cursorsOf(server),
        ),
      ).toBe(true);
    } finally {
      client.source.close();
    }
  }, 30_000);

  it('EventSource on a namespace, told to start over when its id is older than the log keeps', async () => {
    const client = watch(`${through()}/api/changes/events?namespace=far`);
    try {
      await eventually(() => client.opens() === 1, 'the stream open');
      await apply(profile('x@far', 'v1'), profile('y@rs', 'v1'));
      await eventually(() => client.seen.length === 1, 'the first change');
      proxy.cut('refuse');
      await apply(profile('x@far', 'v2'));
      // Everything so far is pruned: the id the client holds is older than the log keeps.
      expect(await pruneLog(handle.db, new Date(Date.now() + 60_000))).toBeGreaterThan(0);
      proxy.restore();
      await eventually(() => client.seen.some((event) => event.type === 'reset'), 'the reset');
      await apply(profile('x@far', 'v3'));
      await eventually(() => client.latest().get('x@far') === 'v3', 'live events after the reset');
      expect(client.seen.map((event) => `${event.type} ${event.name}`)).toEqual([
        'profile x@far',
        'reset far',
        'profile x@far',
      ]);
    } finally {
      client.source.close();
    }
  }, 30_000);

  describe('GraphQL profileChanged(after:) over graphql-ws', () => {
    let ws: Client;
    const SUBSCRIPTION = `subscription Watch($names: [String!]!, $after: String) {
      profileChanged(names: $names, after: $after) { name cursor profile { description } }
    }`;
    interface Change {
      name: string;
      cursor: string;
      profile: { description: string } | null;
    }
    const subscribe = (names: string[], after?: string) => {
      const changes: Change[] = [];
      const errors: unknown[] = [];
      const stop = ws.subscribe<{ profileChanged: Change }>(
        { query: SUBSCRIPTION, variables: { names, after } },
        {
          next: (result) => {
            if (result.data) changes.push(result.data.profileChanged);
            if (result.errors) errors.push(...result.errors);
          },
          error: (error) => errors.push(error),
          complete: () => {},
        },
      );
      return { changes, errors, stop };
    };

    beforeAll(() => {
      ws = createClient({
        url: `${server.url.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
      });
    });
    afterAll(async () => {
      await ws?.dispose();
    });

    /** Resolves once the server holds `count` WebSocket subscriptions. */
    const opened = (count: number) =>
      eventually(
        async () => (await readMetrics(server.url)).value('live_subscriptions', { transport: 'websocket' }) === count,
        `${count} WebSocket subscription(s) open`,
      );

    it('resumes after the last cursor received: the names changed since, then live events', async () => {
      const first = subscribe(['ada@rs', 'cy@rs']);
      await opened(1);
      await apply(profile('ada@rs', 'g1'));
      await eventually(() => first.changes.length === 1, 'the first event');
      first.stop();
      await opened(0);
      const last = first.changes[0]?.cursor ?? '';
      await apply(profile('cy@rs', 'g1'));
      await apply(profile('ada@rs', 'g2'));
      const resumed = subscribe(['ada@rs', 'cy@rs'], last);
      await eventually(() => resumed.changes.length === 2, 'the catch-up');
      await opened(1);
      await apply(profile('cy@rs', 'g2'));
      await eventually(() => resumed.changes.length === 3, 'the live event');
      expect(resumed.changes.map((change) => `${change.name} ${change.profile?.description}`)).toEqual([
        'cy@rs g1',
        'ada@rs g2',
        'cy@rs g2',
      ]);
      expect(inLogOrder([last, ...resumed.changes.map((change) => change.cursor)], await cursorsOf(server))).toBe(true);
      resumed.stop();
    });

    it('refuses an invalid cursor (BAD_USER_INPUT) and one the log no longer keeps (CURSOR_EXPIRED)', async () => {
      const codes = async (after: string) => {
        const refused = subscribe(['ada@rs'], after);
        await eventually(() => refused.errors.length > 0, 'the refusal');
        return refused.errors.map((error) => (error as { extensions?: { code?: string } }).extensions?.code);
      };
      expect(await codes('not-a-cursor')).toEqual(['BAD_USER_INPUT']);
      const old = (await cursorsOf(server))[0] ?? '';
      await apply(profile('ada@rs', 'g3'));
      await pruneLog(handle.db, new Date(Date.now() + 60_000));
      expect(await codes(old)).toEqual(['CURSOR_EXPIRED']);
    });
  });
});
