/**
 * API keys as apps meet them over a real socket, on every test database: a key's own limits past
 * the spent per-IP ones, both headers, every surface (REST, GraphQL over HTTP and SSE, graphql-ws,
 * the REST event stream, WebFinger), 401 for unknown, malformed and revoked keys everywhere, 400
 * for keys in URLs, revocation heard at once, and last use recorded.
 */
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { seedDemoData } from '../src/data/seed.js';
import { listApiKeys, revokeApiKey } from '../src/db/api-key-queries.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { generateApiKey } from '../src/limits/api-key-credentials.js';
import { UNKNOWN_KEYS_PER_MINUTE } from '../src/service/api-keys.js';
import { createKey } from './support/api-keys.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { startFakePurgeEndpoint } from './support/fake-purge-endpoint.js';
import { openRestStream, PROFILE_CHANGED, subscribeOverSse } from './support/live-clients.js';
import { printedOutsideTheLog } from './support/log-capture.js';
import { type RawClient, type RawResponse, rawClient } from './support/raw-http.js';

const CHECK_QUERY = 'email=maker@example.com&name=demo@me';
const GRAPHQL_CHECK = '{ ownerCheck(email: "maker@example.com", name: "demo@me") { hasCreated } }';
const INVALID = { error: 'Invalid API key' };

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const xApiKey = (key: string) => ({ 'x-api-key': key });

function limitOf(response: Response) {
  return {
    limit: response.headers.get('ratelimit-limit'),
    remaining: response.headers.get('ratelimit-remaining'),
  };
}

async function postGraphQL(url: string, query: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { response, body: (await response.json()) as { data?: unknown; errors?: Array<Record<string, unknown>> } };
}

/** The 304 of a conditional request for what `answer` (a 200 with an ETag) sent; none without an ETag. */
async function revalidated(
  raw: RawClient,
  path: string,
  answer: RawResponse,
  headers: Record<string, string>,
): Promise<RawResponse[]> {
  const etag = answer.headers.etag;
  if (answer.status !== 200 || etag === undefined) return [];
  const again = await raw.send(path, { headers: { accept: 'application/json', ...headers, 'if-none-match': etag } });
  expect([path, again.status]).toEqual([path, 304]);
  return [again];
}

interface WsOutcome {
  /** The first result of the subscription (an error result when it was refused). */
  result?: unknown;
  closeCode?: number;
  closeReason?: string;
  dispose(): void;
}

/**
 * Opens a graphql-ws connection and subscribes: settles on the close of the connection, the
 * subscription's first result or error, or, for a subscription that stays open waiting for a
 * change, once the server counts it.
 */
function wsSubscribe(
  url: string,
  connectionParams: Record<string, unknown> | undefined,
  headers: Record<string, string> = {},
  isOpen: () => boolean = () => false,
): Promise<WsOutcome> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const dispose = () => {
      clearInterval(timer);
      void client.dispose();
    };
    const settle = (outcome: Omit<WsOutcome, 'dispose'>) => {
      clearInterval(timer);
      resolve({ ...outcome, dispose });
    };
    const client = createWsClient({
      url: `${url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { headers });
        }
      },
      retryAttempts: 0,
      lazy: true,
      connectionParams,
      on: {
        closed: (event) => {
          const { code, reason } = event as { code: number; reason: string };
          settle({ closeCode: code, closeReason: String(reason) });
        },
        connected: () => {
          timer = setInterval(() => {
            if (isOpen()) settle({});
          }, 10);
        },
      },
    });
    client.subscribe(
      { query: PROFILE_CHANGED, variables: { names: ['demo@me'] } },
      {
        next: (result) => settle({ result }),
        error: (error) => settle({ result: error }),
        complete: () => {},
      },
    );
  });
}

describe.each(databaseKinds())('API keys on %s', (kind) => {
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

  async function serve(env: Record<string, string> = {}) {
    const server = await startTestServer(handle, env);
    servers.push(server);
    return server;
  }

  it('lets an app past its spent per-IP owner-check limit, up to the key own limit, with its headers', async () => {
    const { url } = await serve({ OWNER_CHECK_LIMIT: '2' });
    const { key } = await createKey(handle, { ownerCheckLimit: 3 });
    for (let i = 0; i < 2; i += 1) expect((await fetch(`${url}/api/owner-check?${CHECK_QUERY}`)).status).toBe(200);
    expect((await fetch(`${url}/api/owner-check?${CHECK_QUERY}`)).status).toBe(429);

    const keyed = [];
    for (let i = 0; i < 3; i += 1)
      keyed.push(await fetch(`${url}/api/owner-check?${CHECK_QUERY}`, { headers: bearer(key) }));
    expect(keyed.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(keyed.map(limitOf)).toEqual([
      { limit: '3', remaining: '2' },
      { limit: '3', remaining: '1' },
      { limit: '3', remaining: '0' },
    ]);
    const spent = await fetch(`${url}/api/owner-check?${CHECK_QUERY}`, { headers: xApiKey(key) });
    expect(spent.status).toBe(429);
    expect(limitOf(spent)).toEqual({ limit: '3', remaining: '0' });
    // Keyless clients keep their own (spent) budget.
    expect((await fetch(`${url}/api/owner-check?${CHECK_QUERY}`)).status).toBe(429);
  });

  it('counts both headers against one budget per key, and keys apart from each other', async () => {
    const { url } = await serve();
    const first = await createKey(handle, { profileLimit: 5 });
    const second = await createKey(handle, { profileLimit: 7 });
    const a = await fetch(`${url}/api/demo@me`, { headers: bearer(first.key) });
    const b = await fetch(`${url}/api/demo@me`, { headers: xApiKey(first.key) });
    const c = await fetch(`${url}/api/demo@me`, { headers: { ...bearer(first.key), ...xApiKey(first.key) } });
    const d = await fetch(`${url}/api/demo@me`, { headers: xApiKey(second.key) });
    expect([a, b, c, d].map((response) => response.status)).toEqual([200, 200, 200, 200]);
    expect([a, b, c, d].map(limitOf)).toEqual([
      { limit: '5', remaining: '4' },
      { limit: '5', remaining: '3' },
      { limit: '5', remaining: '2' },
      { limit: '7', remaining: '6' },
    ]);
  });

  it('uses the configured defaults for keys created without limits', async () => {
    const { url } = await serve({ API_KEY_PROFILE_LIMIT: '1234', API_KEY_OWNER_CHECK_LIMIT: '55' });
    const { key } = await createKey(handle);
    expect(limitOf(await fetch(`${url}/api/demo@me`, { headers: bearer(key) })).limit).toBe('1234');
    expect(limitOf(await fetch(`${url}/api/owner-check?${CHECK_QUERY}`, { headers: bearer(key) })).limit).toBe('55');
  });

  it('counts GraphQL over HTTP under the key', async () => {
    const { url } = await serve({ OWNER_CHECK_LIMIT: '1' });
    const { key } = await createKey(handle, { ownerCheckLimit: 2 });
    expect((await postGraphQL(url, GRAPHQL_CHECK)).body.errors).toBeUndefined();
    expect((await postGraphQL(url, GRAPHQL_CHECK)).body.errors?.[0]?.extensions).toMatchObject({
      code: 'RATE_LIMITED',
    });
    const keyed = await postGraphQL(url, GRAPHQL_CHECK, bearer(key));
    expect(keyed.body).toEqual({ data: { ownerCheck: { hasCreated: true } } });
    expect((await postGraphQL(url, GRAPHQL_CHECK, xApiKey(key))).body.errors).toBeUndefined();
    expect((await postGraphQL(url, GRAPHQL_CHECK, xApiKey(key))).body.errors?.[0]?.extensions).toMatchObject({
      code: 'RATE_LIMITED',
    });
    const get = await fetch(`${url}/graphql?query=${encodeURIComponent('{ profile(name: "demo@me") { name } }')}`, {
      headers: { ...bearer(key), accept: 'application/json' },
    });
    expect(await get.json()).toEqual({ data: { profile: { name: 'demo@me' } } });
  });

  it('counts live updates per key: GraphQL over SSE, graphql-ws and the REST event stream', async () => {
    const { url } = await serve({ LIVE_SUBSCRIPTIONS_PER_CLIENT: '1' });
    const { key } = await createKey(handle);
    const keyless = await openRestStream(url, 'demo@me');
    expect(keyless.status).toBe(200);
    // The key is another client: its own slot, although the address's is taken.
    const sse = subscribeOverSse(url, ['demo@me'], bearer(key));
    const open = () => Object.values(servers[0]?.app.live.stats().open ?? {}).reduce((a, b) => a + b, 0);
    await eventually(() => open() === 2 || sse.errors.length > 0 || sse.ended, 'the SSE subscription to hold its slot');
    expect(sse.errors).toEqual([]);
    // The key's one slot is taken by the SSE subscription now.
    const rest = await openRestStream(url, 'demo@me', xApiKey(key));
    expect(rest.status).toBe(429);
    const ws = await wsSubscribe(url, { apiKey: key });
    sse.stop();
    keyless.stop();
    rest.stop();
    ws.dispose();
    expect(ws.result).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });

    await eventually(() => open() === 0, 'the subscriptions to close');
    const wsAlone = await wsSubscribe(url, { apiKey: key }, {}, () => open() === 1);
    wsAlone.dispose();
    expect([wsAlone.result, wsAlone.closeCode]).toEqual([undefined, undefined]);
    await eventually(() => open() === 0, 'the WebSocket subscription to close');
    const restAlone = await openRestStream(url, 'demo@me', bearer(key));
    restAlone.stop();
    expect(restAlone.status).toBe(200);
  });

  describe('refuses invalid keys with 401 on every surface', () => {
    const malformed = 'nps_short';
    const unknown = generateApiKey();

    it.each([
      ['malformed', malformed],
      ['unknown', unknown],
    ])('REST, GraphQL over HTTP and SSE, the event stream, WebFinger (%s)', async (_, key) => {
      const { url } = await serve();
      for (const headers of [bearer(key), xApiKey(key)]) {
        const rest = await fetch(`${url}/api/demo@me`, { headers });
        expect(rest.status).toBe(401);
        expect(rest.headers.get('www-authenticate')).toBe('Bearer');
        expect(await rest.json()).toEqual(INVALID);
        expect(rest.headers.get('ratelimit-limit')).toBeNull();

        const graphql = await postGraphQL(url, GRAPHQL_CHECK, headers);
        expect(graphql.response.status).toBe(401);
        expect(graphql.body).toEqual({
          errors: [{ message: 'Invalid API key', extensions: { code: 'UNAUTHENTICATED' } }],
        });

        const sse = await fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({ query: PROFILE_CHANGED, variables: { names: ['demo@me'] } }),
        });
        expect(sse.status).toBe(401);
        expect(((await sse.json()) as { errors: unknown[] }).errors).toHaveLength(1);

        const stream = await openRestStream(url, 'demo@me', headers);
        stream.stop();
        expect(stream.status).toBe(401);

        const webfinger = await fetch(`${url}/.well-known/webfinger?resource=acct:demo@me`, { headers });
        expect(webfinger.status).toBe(401);
      }
    });

    it('graphql-ws closes the connection with 4401 (key in connection_init or the upgrade headers)', async () => {
      const { url } = await serve();
      const { key } = await createKey(handle);
      const printed = printedOutsideTheLog();
      for (const apiKey of [
        malformed,
        unknown,
        '',
        // JSON that is no key, the valid key inside it or not: never converted to a string.
        { toString: false },
        { toString: key, valueOf: key },
        { apiKey: key },
        [key],
        [],
        42,
        true,
        null,
        { nested: { toString: { toString: false } } },
      ]) {
        const ws = await wsSubscribe(url, { apiKey });
        expect([apiKey, ws.closeCode, ws.closeReason]).toEqual([apiKey, 4401, 'Invalid API key']);
      }
      expect(printed.stop()).toEqual([]);
      const fromHeaders = await wsSubscribe(url, undefined, xApiKey(unknown));
      expect(fromHeaders).toMatchObject({ closeCode: 4401 });
      const disagreeing = await wsSubscribe(url, { apiKey: key }, xApiKey(generateApiKey()));
      expect(disagreeing).toMatchObject({ closeCode: 4401 });
      const open = () => servers[0]?.app.live.stats().open.websocket === 1;
      const agreeing = await wsSubscribe(url, { apiKey: key }, bearer(key), open);
      agreeing.dispose();
      expect([agreeing.result, agreeing.closeCode]).toEqual([undefined, undefined]);
    });

    it('429 rather than a lookup once an address sent too many unknown keys', async () => {
      const { url } = await serve();
      for (let i = 0; i < UNKNOWN_KEYS_PER_MINUTE; i += 1) {
        expect((await fetch(`${url}/api/demo@me`, { headers: xApiKey(generateApiKey()) })).status).toBe(401);
      }
      const flooded = await fetch(`${url}/api/demo@me`, { headers: xApiKey(generateApiKey()) });
      expect(flooded.status).toBe(429);
      expect(Number(flooded.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await flooded.json()).toEqual({
        error: expect.stringMatching(/^Too many requests, retry in \d+ seconds$/),
      });
      // Keyless requests of the address are not affected.
      expect((await fetch(`${url}/api/demo@me`)).status).toBe(200);
    });

    it('a request whose two headers name different keys, even valid ones', async () => {
      const { url } = await serve();
      const first = await createKey(handle);
      const second = await createKey(handle);
      const both = await fetch(`${url}/api/demo@me`, { headers: { ...bearer(first.key), ...xApiKey(second.key) } });
      expect(both.status).toBe(401);
      expect(await both.json()).toEqual(INVALID);
    });

    it('a revoked key at once, on REST, GraphQL and graphql-ws, and not the keys beside it', async () => {
      const server = await serve();
      const { url } = server;
      // The server hears notifications (PostgreSQL: its first heartbeat came back).
      await eventually(() => server.app.cache.stats().answering, 'the change feed');
      const kept = await createKey(handle);
      const revoked = await createKey(handle);
      // Used first, so that the server holds it in memory; a WebSocket connection opened with it.
      expect((await fetch(`${url}/api/demo@me`, { headers: bearer(revoked.key) })).status).toBe(200);
      expect((await fetch(`${url}/api/demo@me`, { headers: bearer(revoked.key) })).status).toBe(200);
      let closed: { code: number; reason: string } | undefined;
      const connection = createWsClient({
        url: `${url.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        // Open until the server closes it, not only while an operation runs.
        lazy: false,
        onNonLazyError: () => {}, // the close is what the test waits for
        connectionParams: { apiKey: revoked.key },
        on: {
          closed: (event) => {
            closed = event as { code: number; reason: string };
          },
        },
      });
      const first = await new Promise((resolve) => {
        connection.subscribe(
          { query: '{ profile(name: "demo@me") { name } }' },
          { next: resolve, error: resolve, complete: () => {} },
        );
      });
      expect(first).toEqual({ data: { profile: { name: 'demo@me' } } });
      const stream = await openRestStream(url, 'demo@me', bearer(revoked.key));
      const sse = subscribeOverSse(url, ['demo@me'], xApiKey(revoked.key));
      const keptStream = await openRestStream(url, 'demo@me', bearer(kept.key));
      const open = () => Object.values(servers[0]?.app.live.stats().open ?? {}).reduce((a, b) => a + b, 0);
      await eventually(() => open() === 3, 'three open subscriptions');
      expect(await revokeApiKey(handle.db, revoked.id)).toBe('revoked');
      // Its open streams end; the other key's stays.
      await stream.waitForEnd(2000);
      await sse.waitForEnd(2000);
      expect(keptStream.ended).toBe(false);
      keptStream.stop();
      // PGlite hears its own notification at commit; a PostgreSQL listener as soon as it arrives.
      const deadline = Date.now() + 1000;
      let status = 200;
      while (status !== 401 && Date.now() < deadline) {
        status = (await fetch(`${url}/api/demo@me`, { headers: bearer(revoked.key) })).status;
      }
      expect(status).toBe(401);
      expect((await postGraphQL(url, GRAPHQL_CHECK, xApiKey(revoked.key))).response.status).toBe(401);
      const revokedStream = await openRestStream(url, 'demo@me', xApiKey(revoked.key));
      revokedStream.stop();
      expect(revokedStream.status).toBe(401);
      const revokedSse = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { ...bearer(revoked.key), 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: PROFILE_CHANGED, variables: { names: ['demo@me'] } }),
      });
      expect(revokedSse.status).toBe(401);
      await revokedSse.body?.cancel();
      const webfinger = await fetch(`${url}/.well-known/webfinger?resource=acct:demo@me`, {
        headers: bearer(revoked.key),
      });
      expect(webfinger.status).toBe(401);
      expect(await wsSubscribe(url, { apiKey: revoked.key })).toMatchObject({ closeCode: 4401 });
      // The connection opened before the revocation admits no further operation.
      connection.subscribe(
        { query: '{ profile(name: "demo@me") { name } }' },
        { next: () => {}, error: () => {}, complete: () => {} },
      );
      await eventually(() => closed !== undefined, 'the connection to close');
      expect(closed).toMatchObject({ code: 4401, reason: 'Invalid API key' });
      await connection.dispose();
      expect((await fetch(`${url}/api/demo@me`, { headers: bearer(kept.key) })).status).toBe(200);
    });
  });

  it('lets browsers send either header (CORS preflight)', async () => {
    const { url } = await serve();
    for (const path of ['/api/demo@me', '/graphql']) {
      const preflight = await fetch(`${url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization,x-api-key',
        },
      });
      expect(preflight.status).toBe(204);
      const allowed = preflight.headers.get('access-control-allow-headers')?.toLowerCase().split(/, */);
      expect(allowed).toEqual(expect.arrayContaining(['authorization', 'x-api-key']));
    }
  });

  it('refuses a key in the query string with 400 in every spelling, on every path and the WebSocket upgrade', async () => {
    const { url } = await serve({ PROFILE_LIMIT: '1000' });
    const { key } = await createKey(handle, { profileLimit: 50 });
    const raw = rawClient(url);
    const message = JSON.stringify({ error: 'Send the API key in a header, not in the URL' });
    const document = encodeURIComponent('{ profile(name: "demo@me") { name } }');
    const paths = [
      `/api/demo@me?api_key=${key}`,
      `/api/owner-check?${CHECK_QUERY}&apiKey=${key}`,
      `/graphql?query=${document}&apiKey=${key}`,
      `/api/demo@me/events?api_key=${key}`,
      // The attack run's: the name percent-encoded, which URLSearchParams decodes to api_key.
      `/api/demo@me?%61pi_key=${key}`,
      `/api/demo@me?ap%69Key=${key}`,
      `/api/demo@me?%41PI%5fKEY=${key}`,
      `/api/demo@me?size=1&api_key=${key}&api_key=${key}`,
      `/api/demo@me?apiKey`,
      `/graphql?query=${document}&variables=%7B%7D&%61piKey=${key}`,
      `/graphql?%61pi_key=${key}&query=${document}`,
      `/api/demo@me/events?ap%69_key=${key}`,
      `/api/demo@me/avatar?size=64&%61pikey=${key}`,
      `/api/demo@me/vcard?APIKEY=${key}`,
      `/api/profiles?names=demo@me&api%5Fkey=${key}`,
      `/.well-known/webfinger?resource=acct:demo@me&api_key=${key}`,
      // Not the apps' routes, and no route at all: a URL with a key is refused wherever it goes.
      `/health?api_key=${key}`,
      `/metrics?apiKey=${key}`,
      `/nowhere?%61pi_key=${key}`,
    ];
    for (const path of paths) {
      for (const headers of [{ accept: 'application/json' }, { accept: 'application/json', ...bearer(key) }]) {
        const response = await raw.send(path, { headers });
        expect([path, response.status, response.text]).toEqual([path, 400, message]);
        expect(response.headers['cache-control']).toBe('no-store');
      }
    }
    const post = await raw.send(`/graphql?ap%69Key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' }),
    });
    expect([post.status, post.text]).toEqual([400, message]);
    // A browser's preflight passes, so that its request after it reads the 400's message.
    const preflight = await raw.send(`/api/demo@me?%61pi_key=${key}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    // None of them drew on the key's budget: it was never taken from the URL.
    expect(limitOf(await fetch(`${url}/api/demo@me`, { headers: bearer(key) }))).toEqual({
      limit: '50',
      remaining: '49',
    });
    raw.close();
    for (const query of [`apiKey=${key}`, `%61pi_key=${key}`, `ap%69Key=${key}`]) {
      const upgrade = await new Promise<number | undefined>((resolve) => {
        const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/graphql?${query}`, 'graphql-transport-ws');
        socket.on('unexpected-response', (request, response) => {
          resolve(response.statusCode);
          request.destroy();
        });
        socket.on('error', () => {});
        socket.on('open', () => {
          resolve(101);
          socket.close();
        });
      });
      expect([query, upgrade]).toEqual([query, 400]);
    }
  });

  it('refuses more than one key header line with 401, on REST, GraphQL and graphql-ws, charging no key', async () => {
    const { url } = await serve();
    const first = await createKey(handle, { profileLimit: 20 });
    const second = await createKey(handle, { profileLimit: 30 });
    const raw = rawClient(url);
    // Node's client sends a header given as a list as one line per value.
    const twice = (name: string, a: string, b: string) => ({ [name]: [a, b] as unknown as string });
    for (const headers of [
      twice('authorization', `Bearer ${first.key}`, `Bearer ${second.key}`),
      twice('authorization', `Bearer ${first.key}`, `Bearer ${first.key}`),
      twice('x-api-key', first.key, second.key),
      twice('x-api-key', first.key, first.key),
      { ...bearer(first.key), ...xApiKey(second.key) },
      { ...twice('authorization', `Bearer ${first.key}`, `Bearer ${first.key}`), ...xApiKey(first.key) },
    ]) {
      const rest = await raw.send('/api/demo@me', { headers });
      expect([rest.status, rest.text]).toEqual([401, JSON.stringify(INVALID)]);
      expect(rest.headers['www-authenticate']).toBe('Bearer');
      const graphql = await raw.send('/graphql', {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' }),
      });
      expect(graphql.status).toBe(401);
      expect(JSON.parse(graphql.text)).toEqual({
        errors: [{ message: 'Invalid API key', extensions: { code: 'UNAUTHENTICATED' } }],
      });
      const ws = await wsSubscribe(url, undefined, headers as Record<string, string>);
      expect(ws).toMatchObject({ closeCode: 4401, closeReason: 'Invalid API key' });
    }
    raw.close();
    // Neither app was charged for them.
    expect(limitOf(await fetch(`${url}/api/demo@me`, { headers: bearer(first.key) }))).toEqual({
      limit: '20',
      remaining: '19',
    });
    expect(limitOf(await fetch(`${url}/api/demo@me`, { headers: bearer(second.key) }))).toEqual({
      limit: '30',
      remaining: '29',
    });
  });

  it.each([
    ['without purging', false],
    ['with CACHE_PURGE_URLS, where keyless answers get s-maxage and tags', true],
  ])(
    'answers a request with a key private, with the max-age others get, no s-maxage or tags, 304s too (%s)',
    async (_, purging) => {
      const endpoint = purging ? await startFakePurgeEndpoint() : undefined;
      try {
        const { url } = await serve({
          CACHE_MAX_AGE: '60',
          PUBLIC_URL: 'https://names.test',
          ...(endpoint === undefined ? {} : { CACHE_PURGE_URLS: endpoint.url }),
        });
        const { key } = await createKey(handle);
        const raw = rawClient(url);
        if (purging) {
          // Keyless answers are shared once the change feed vouches for every change.
          const deadline = Date.now() + 15_000;
          while (!String((await raw.send('/api/demo@me')).headers['cache-control']).includes('s-maxage')) {
            if (Date.now() > deadline) throw new Error('the change feed did not become live within 15 s');
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        }
        const avatarUrl = (await postGraphQL(url, '{ profile(name: "demo@me") { avatarUrl } }')).body.data as {
          profile: { avatarUrl: string };
        };
        const graphqlGet = (query: string) => `/graphql?query=${encodeURIComponent(query)}`;
        const paths = [
          '/api/demo@me',
          '/api/nobody@me',
          '/api/profiles?names=demo@me,nobody@me',
          '/api/demo@me/vcard',
          '/api/demo@me/avatar',
          // The current version's URL: immutable for everyone, private for the key.
          avatarUrl.profile.avatarUrl.slice('https://names.test'.length),
          '/.well-known/webfinger?resource=acct:demo@me',
          '/.well-known/webfinger?resource=acct:nobody@me',
          '/api/search?prefix=de',
          '/api/wallet/0x00000000000000000000000000000000000a1150',
          graphqlGet('{ profile(name: "demo@me") { name } }'),
          graphqlGet('{ searchProfiles(prefix: "de") { edges { cursor } } }'),
        ];
        for (const path of paths) {
          const keyless = await raw.send(path, { headers: { accept: 'application/json' } });
          const keyed = await raw.send(path, { headers: { accept: 'application/json', ...xApiKey(key) } });
          const context = `${path}: ${keyless.status} ${keyless.headers['cache-control']}`;
          expect(keyed.status, context).toBe(keyless.status);
          // REST answers show the key's budget (GraphQL's carry no RateLimit headers).
          if (!path.startsWith('/graphql')) expect(keyed.headers['ratelimit-limit'], context).toBe('6000');
          // Others' answer is one a shared cache may keep (a keyless 404 without purging says nothing).
          if (purging || keyless.status !== 404) expect(keyless.headers['cache-control'], context).toMatch(/^public, /);
          const maxAge = /max-age=\d+/.exec(String(keyless.headers['cache-control']))?.[0];
          const immutable = String(keyless.headers['cache-control']).endsWith(', immutable') ? ', immutable' : '';
          const expected = maxAge === undefined ? 'private' : `private, ${maxAge}${immutable}`;
          for (const answer of [keyed, ...(await revalidated(raw, path, keyed, xApiKey(key)))]) {
            expect([answer.status, answer.headers['cache-control']], context).toEqual([answer.status, expected]);
            expect([answer.headers.xkey, answer.headers['surrogate-key']], context).toEqual([undefined, undefined]);
          }
        }
        // Answers no cache may keep stay so; anything else the key gets is private too.
        const owner = await raw.send(`/api/owner-check?${CHECK_QUERY}`, { headers: xApiKey(key) });
        expect(owner.headers['cache-control']).toBe('no-store');
        const invalid = await raw.send('/api/not-a-name', { headers: xApiKey(key) });
        expect([invalid.status, invalid.headers['cache-control']]).toEqual([400, 'private']);
        const post = await postGraphQL(url, '{ profile(name: "demo@me") { name } }', bearer(key));
        expect(post.response.headers.get('cache-control')).toBe('private');
        raw.close();
      } finally {
        await endpoint?.close();
      }
    },
  );

  it('records when each key was last used, in one write, at the latest when the server stops', async () => {
    const server = await serve();
    const used = await createKey(handle);
    const unused = await createKey(handle);
    expect((await fetch(`${server.url}/api/demo@me`, { headers: bearer(used.key) })).status).toBe(200);
    const before = new Date();
    await server.close();
    servers.splice(0);
    const rows = await listApiKeys(handle.db);
    const lastUsed = rows.find((row) => row.id === used.id)?.lastUsedAt;
    expect(lastUsed).toBeInstanceOf(Date);
    expect(lastUsed?.getTime()).toBeLessThanOrEqual(before.getTime());
    expect(rows.find((row) => row.id === unused.id)?.lastUsedAt).toBeNull();
  });
});
