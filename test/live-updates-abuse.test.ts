/**
 * Live updates under attack, as a hostile client tries them, on both GraphQL HTTP paths
 * (vitest.config.ts runs this suite again on Yoga's handler): 406 storms, clients that leave
 * before their answer, refused streams, and one import changing all 100 names of readers that
 * read. After each round the live bounds' figures (`/metrics`: open subscriptions, watched names,
 * clients holding slots, drops) show what is left: nothing but what is really open.
 *
 * The server trusts one proxy hop, so that `X-Forwarded-For` makes a request come from an
 * address of the test's choosing: the per-client bound (20) applies to each address.
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import {
  openRestStream,
  type RestStream,
  subscribeOverSse,
  subscribeOverWebSocket,
  webSocketClient,
} from './support/live-clients.js';
import { readMetrics } from './support/metrics.js';
import { type RawClient, rawClient } from './support/raw-http.js';

const NAMESPACE = { kind: 'namespace', name: 'abuse', ownerEmail: 'abuse-owner@example.com' };
const NAMES = Array.from({ length: 100 }, (_, index) => `p${index}@abuse`);
const profileLine = (name: string, description: string) => ({
  kind: 'profile',
  name,
  creatorEmail: 'abuse-creator@example.org',
  description,
  records: { '1': { type: 'name', value: name } },
});

const subscriptionBody = (names: unknown, selection = 'name') =>
  JSON.stringify({
    query: `subscription($names: [String!]!) { profileChanged(names: $names) { ${selection} } }`,
    variables: { names },
  });

/** The figures of the live bounds in /metrics. */
interface LiveFigures {
  sse: number;
  websocket: number;
  rest: number;
  watched: number;
  clients: number;
  dropped: number;
}

async function liveFigures(url: string): Promise<LiveFigures> {
  const metrics = await readMetrics(url);
  const figure = (name: string, labels?: Record<string, string>) => {
    const value = metrics.value(name, labels);
    if (value === undefined) throw new Error(`/metrics has no ${name} ${JSON.stringify(labels ?? {})}`);
    return value;
  };
  return {
    sse: figure('live_subscriptions', { transport: 'sse' }),
    websocket: figure('live_subscriptions', { transport: 'websocket' }),
    rest: figure('live_subscriptions', { transport: 'rest' }),
    watched: figure('live_watched_names'),
    clients: figure('live_subscription_clients'),
    dropped: figure('live_subscribers_dropped_total'),
  };
}

/** The same request as a GET: the parameters in the query string, variables as JSON. */
function getPath(body: string): string {
  const { query, variables } = JSON.parse(body) as { query: string; variables: unknown };
  return `/graphql?${new URLSearchParams({ query, variables: JSON.stringify(variables) })}`;
}

const NOTHING_OPEN = { sse: 0, websocket: 0, rest: 0, watched: 0, clients: 0 };

describe.each(databaseKinds())('live updates under attack on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let client: RawClient;
  const cleanups: Array<() => void> = [];
  let serial = 0;

  const post = (body: string, headers: Record<string, string>) =>
    client.send('/graphql', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const openCount = () => {
    const { open } = server.app.live.stats();
    return open.sse + open.websocket + open.rest;
  };
  /** Until nothing is open: the server notices a client going away a little later. */
  const allClosed = () => eventually(() => openCount() === 0, { what: 'every subscription to close', withinMs: 5000 });
  const importAll = async (names: readonly string[]) => {
    serial += 1;
    const report = await importLines(handle.db, ndjson(...names.map((name) => profileLine(name, `Edit ${serial}`))));
    expect(report.ok, JSON.stringify(report.problems)).toBe(true);
    return `Edit ${serial}`;
  };

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await importLines(handle.db, ndjson(NAMESPACE, ...NAMES.map((name) => profileLine(name, 'First'))));
    server = await startTestServer(handle, {
      PROFILE_LIMIT: '0',
      TRUST_PROXY_HOPS: '1',
      LIVE_SUBSCRIPTIONS_MAX: '400',
    });
    client = rawClient(server.url);
    await eventually(() => server.app.cache.stats().answering, { what: 'the change feed', withinMs: 10_000 });
  }, 60_000);
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) cleanup();
    await allClosed();
  });
  afterAll(async () => {
    client?.close();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('holds no slot for a subscription refused with 406, however many: the address can still subscribe', async () => {
    const refusedAccepts = [
      'application/xml',
      'multipart/mixed',
      'text/html',
      'application/json;q=0',
      'text/event-stream;q=0',
      'text/event-stream;q=0.0, application/xml',
    ];
    // 25 rounds from each of 4 addresses: 600 refusals, more than the process allows open (400).
    for (let round = 0; round < 25; round += 1) {
      for (const address of ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4']) {
        for (const accept of refusedAccepts) {
          const answer = await post(subscriptionBody(['p1@abuse']), { accept, 'x-forwarded-for': address });
          expect(answer.status, `${accept}: ${answer.text.slice(0, 200)}`).toBe(406);
          expect(answer.headers['content-type'] ?? '').not.toMatch(/event-stream|multipart/);
        }
      }
    }
    expect(await liveFigures(server.url)).toMatchObject(NOTHING_OPEN);
    const streams = await Promise.all(
      Array.from({ length: 20 }, () => openRestStream(server.url, 'p1@abuse', { 'x-forwarded-for': '198.51.100.1' })),
    );
    cleanups.push(...streams.map((stream) => () => stream.stop()));
    expect(streams.map((stream) => stream.status)).toEqual(Array(20).fill(200));
    expect((await liveFigures(server.url)).clients).toBe(1);
  });

  it('holds no slot for a stream whose client left before the answer', async () => {
    const { port } = new URL(server.url);
    const body = subscriptionBody(['p2@abuse']);
    for (let index = 0; index < 40; index += 1) {
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.9\r\nAccept: text/event-stream\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      // Half of them leave at once, half once the stream's head arrived.
      if (index % 2 === 1) await new Promise((resolve) => socket.once('data', resolve));
      socket.destroy();
    }
    await allClosed();
    expect(await liveFigures(server.url)).toMatchObject(NOTHING_OPEN);
    const stream = await openRestStream(server.url, 'p2@abuse', { 'x-forwarded-for': '198.51.100.9' });
    cleanups.push(() => stream.stop());
    expect(stream.status).toBe(200);
  });

  it('answers GraphQL-over-SSE refusals with 4xx JSON, not a stream: invalid, 0 or 101 names, invalid documents', async () => {
    const sse = { accept: 'text/event-stream' };
    const cases: Array<[string, string, string]> = [
      ['no names', subscriptionBody([]), 'At least one name is required'],
      ['101 names', subscriptionBody(Array.from({ length: 101 }, (_, i) => `n${i}@abuse`)), 'At most 100 names'],
      ['invalid names', subscriptionBody(['p1@abuse', 'bad', 'worse one']), 'Invalid name format'],
      ['a document that does not validate', subscriptionBody(['p1@abuse'], 'nope'), 'Cannot query field'],
    ];
    for (const [what, body, message] of cases) {
      for (const method of ['POST', 'GET'] as const) {
        const answer =
          method === 'POST'
            ? await post(body, sse)
            : await client.send(getPath(body), {
                headers: sse,
              });
        expect(answer.status, `${what} (${method}): ${answer.text.slice(0, 300)}`).toBe(400);
        expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(answer.headers['x-content-type-options']).toBe('nosniff');
        const { errors } = JSON.parse(answer.text) as { errors: Array<{ message: string }> };
        expect(errors[0]?.message).toContain(message);
      }
    }
    // Like profiles(names:): the first invalid name, and the indexes of all.
    const invalid = JSON.parse((await post(subscriptionBody(['p1@abuse', 'bad', 'worse one']), sse)).text) as {
      errors: Array<{ extensions: Record<string, unknown> }>;
    };
    expect(invalid.errors[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      name: 'bad',
      invalidIndexes: [1, 2],
    });
    expect(await liveFigures(server.url)).toMatchObject(NOTHING_OPEN);

    // graphql-sse's client reports such a refusal as an error, with the status.
    const refused = subscribeOverSse(server.url, ['bad']);
    await refused.waitForEnd();
    expect(refused.events).toEqual([]);
    expect(String(refused.errors[0])).toMatch(/Server responded with 400/);
  });

  it('answers a GraphQL-over-SSE subscription over the per-client bound with 429 JSON and Retry-After', async () => {
    const address = { 'x-forwarded-for': '198.51.100.20' };
    const streams = await Promise.all(
      Array.from({ length: 20 }, () => openRestStream(server.url, 'p3@abuse', address)),
    );
    cleanups.push(...streams.map((stream) => () => stream.stop()));
    for (const method of ['POST', 'GET'] as const) {
      const body = subscriptionBody(['p3@abuse']);
      const headers = { accept: 'text/event-stream', ...address };
      const answer =
        method === 'POST'
          ? await post(body, headers)
          : await client.send(getPath(body), {
              headers,
            });
      expect(answer.status, answer.text.slice(0, 300)).toBe(429);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      expect(JSON.parse(answer.text)).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
    }
    expect((await liveFigures(server.url)).rest).toBe(20);
  });

  it('delivers all 100 events of one import changing all 100 watched names, on every transport, dropping nobody', async () => {
    const droppedBefore = (await liveFigures(server.url)).dropped;
    const sse = subscribeOverSse(server.url, NAMES, { 'x-forwarded-for': '198.51.100.30' });
    const wsClient = webSocketClient(server.url);
    const ws = subscribeOverWebSocket(wsClient, NAMES);
    cleanups.push(
      () => sse.stop(),
      () => ws.stop(),
      () => void wsClient.dispose(),
    );
    // 100 REST streams, one per name, from five addresses (20 each).
    const rest: RestStream[] = await Promise.all(
      NAMES.map((name, index) =>
        openRestStream(server.url, name, { 'x-forwarded-for': `198.51.100.${40 + (index % 5)}` }),
      ),
    );
    cleanups.push(...rest.map((stream) => () => stream.stop()));
    expect(rest.every((stream) => stream.status === 200)).toBe(true);
    await eventually(() => openCount() === 102, { what: '102 open subscriptions', withinMs: 5000 });

    for (let burst = 1; burst <= 3; burst += 1) {
      const description = await importAll(NAMES);
      await sse.waitFor(100 * burst, 10_000);
      await ws.waitFor(100 * burst, 10_000);
      await eventually(() => rest.every((stream) => stream.events.length === burst), {
        what: 'every REST event',
        withinMs: 10_000,
      });
      const latest = (events: typeof sse.events) =>
        new Set(
          events
            .slice(-100)
            .map((event) => `${event.profileChanged.name} ${event.profileChanged.profile?.description}`),
        );
      const expected = new Set(NAMES.map((name) => `${name} ${description}`));
      expect(latest(sse.events)).toEqual(expected);
      expect(latest(ws.events)).toEqual(expected);
    }
    expect(sse.ended || ws.ended || rest.some((stream) => stream.ended)).toBe(false);
    expect(sse.errors).toEqual([]);
    expect(ws.errors).toEqual([]);
    const figures = await liveFigures(server.url);
    expect(figures).toMatchObject({ sse: 1, websocket: 1, rest: 100, watched: 100, clients: 7 });
    expect(figures.dropped).toBe(droppedBefore);
  }, 60_000);

  it('leaves the bounds as they were after the abuse: nothing open, no client holding a slot, no drop', async () => {
    const before = await liveFigures(server.url);
    for (let round = 0; round < 3; round += 1) {
      for (const accept of ['application/xml', 'text/event-stream;q=0']) {
        expect((await post(subscriptionBody(['p5@abuse']), { accept })).status).toBe(406);
      }
      expect((await post(subscriptionBody(['bad']), { accept: 'text/event-stream' })).status).toBe(400);
      const sse = subscribeOverSse(server.url, ['p5@abuse']);
      await eventually(() => server.app.live.stats().open.sse === 1, { what: 'the subscription', withinMs: 5000 });
      await importAll(['p5@abuse']);
      await sse.waitFor(1);
      sse.stop();
      await allClosed();
    }
    const after = await liveFigures(server.url);
    expect(after).toMatchObject(NOTHING_OPEN);
    expect(after.dropped).toBe(before.dropped);
  });
});
