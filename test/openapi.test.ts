/**
 * The OpenAPI document at /api/openapi.json against real answers: every documented path, method
 * and status is produced for real; its body is validated with Ajv (JSON Schema 2020-12, the
 * dialect of OpenAPI 3.1) or, for a HEAD, 302 or 304, checked to be empty; every header the
 * document marks required is there, and every header of the answer that the document could
 * describe (rate limits, caching, CORS, X-Request-Id…) is described for that status. And no
 * documented status is left unproduced. The document also passes Redocly's recommended rules.
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import { pruneLog } from '../src/db/change-log.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { openDatabase } from '../src/db/database.js';
import { generateApiKey } from '../src/limits/api-key-credentials.js';
import { UNKNOWN_KEYS_PER_MINUTE } from '../src/service/api-keys.js';
import { createKey } from './support/api-keys.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { serve, startImageOrigin, transparentPng } from './support/image-origin.js';

type Method = 'get' | 'head' | 'post' | 'delete';

interface HeaderObject {
  $ref?: string;
  required?: boolean;
}

interface ResponseObject {
  content?: Record<string, { schema: unknown }>;
  headers?: Record<string, HeaderObject>;
}

interface OpenApiDocument {
  openapi: string;
  servers: Array<{ url: string }>;
  paths: Record<string, Partial<Record<Method, { responses: Record<string, ResponseObject> }>>>;
  components: { headers: Record<string, HeaderObject> };
}

/** Headers the document describes; an answer that carries one must have it documented. */
const DESCRIBABLE_HEADERS = [
  'x-request-id',
  'access-control-allow-origin',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'retry-after',
  'etag',
  'cache-control',
  'vary',
  'xkey',
  'surrogate-key',
  'allow',
  'location',
  'content-disposition',
  'content-security-policy',
  'x-content-type-options',
  'www-authenticate',
  'vary',
];

const PUBLIC_URL = 'https://names.test';
const OPENAPI = '/api/openapi.json';
const OWNER_CHECK = '/api/owner-check';
const BATCH = '/api/profiles';
const PROFILE = '/api/{name_id}';
const AVATAR = '/api/{name_id}/avatar';
const VCARD = '/api/{name_id}/vcard';
const EVENTS = '/api/{name_id}/events';
const WEBFINGER = '/.well-known/webfinger';
const SEARCH = '/api/search';
const WALLET = '/api/wallet/{address}';
const CHANGES = '/api/changes';
const CHANGE_EVENTS = '/api/changes/events';
const WEBHOOKS = '/api/webhooks';
const WEBHOOK = '/api/webhooks/{id}';
const WEBHOOK_ENABLE = '/api/webhooks/{id}/enable';
const WEBHOOK_ROTATE = '/api/webhooks/{id}/rotate-secret';
const WEBHOOK_DELIVERIES = '/api/webhooks/{id}/deliveries';
const WEBHOOK_REPLAY = '/api/webhooks/{id}/replay';
const DEMO_ETH = '0x0000000000000000000000000000000000de0000';
/** Where the webhooks of these tests would deliver: a closed port of 127.0.0.1. */
const RECEIVER = 'http://127.0.0.1:1/hook';

/** Each operation of the webhook paths, on the endpoint `id`: its path, method, URL and body. */
function webhookCalls(id: string, after: string): Array<[string, Method, string, string | undefined]> {
  return [
    [WEBHOOKS, 'get', WEBHOOKS, undefined],
    [WEBHOOKS, 'head', WEBHOOKS, undefined],
    [WEBHOOKS, 'post', WEBHOOKS, JSON.stringify({ url: RECEIVER })],
    [WEBHOOK, 'get', `${WEBHOOKS}/${id}`, undefined],
    [WEBHOOK, 'head', `${WEBHOOKS}/${id}`, undefined],
    [WEBHOOK_ENABLE, 'post', `${WEBHOOKS}/${id}/enable`, undefined],
    [WEBHOOK_ROTATE, 'post', `${WEBHOOKS}/${id}/rotate-secret`, undefined],
    [WEBHOOK_DELIVERIES, 'get', `${WEBHOOKS}/${id}/deliveries`, undefined],
    [WEBHOOK_DELIVERIES, 'head', `${WEBHOOKS}/${id}/deliveries`, undefined],
    [WEBHOOK_REPLAY, 'post', `${WEBHOOKS}/${id}/replay`, JSON.stringify({ after })],
    [WEBHOOK, 'delete', `${WEBHOOKS}/${id}`, undefined],
  ];
}

/** One request for each documented lookup path that finds something, misses, and is invalid. */
const LOOKUPS = [
  { path: PROFILE, found: '/api/demo@me', missing: '/api/nobody@me', invalid: '/api/not-a-name' },
  { path: BATCH, found: '/api/profiles?names=demo@me,nobody@me', missing: undefined, invalid: '/api/profiles' },
  {
    path: AVATAR,
    found: '/api/empty@me/avatar',
    missing: '/api/nobody@me/avatar?fallback=404',
    invalid: '/api/demo@me/avatar?size=1',
  },
  { path: VCARD, found: '/api/demo@me/vcard', missing: '/api/nobody@me/vcard', invalid: '/api/not-a-name/vcard' },
  {
    path: WEBFINGER,
    found: '/.well-known/webfinger?resource=acct:demo@me',
    missing: '/.well-known/webfinger?resource=acct:nobody@me',
    invalid: '/.well-known/webfinger?resource=demo@me',
  },
  // A search or a reverse lookup that finds nothing is an empty page, not a 404.
  { path: SEARCH, found: '/api/search?prefix=de&limit=1', missing: undefined, invalid: '/api/search?prefix=-' },
  { path: WALLET, found: `/api/wallet/${DEMO_ETH}`, missing: undefined, invalid: `/api/wallet/${DEMO_ETH}?limit=0` },
  { path: CHANGES, found: '/api/changes?limit=2', missing: undefined, invalid: '/api/changes?after=x' },
] as const;

describe('OpenAPI document', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let documentText: string;
  let document: OpenApiDocument;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormatsPlugin as unknown as (ajv: Ajv2020) => void)(ajv);
  const produced = new Set<string>();

  const headerObject = (header: HeaderObject): HeaderObject =>
    header.$ref === undefined
      ? header
      : { ...document.components.headers[header.$ref.split('/').pop() ?? ''], ...header, $ref: undefined };

  /** Validates a real answer against the document: status, headers and body. */
  async function check(path: string, method: Method, response: Response): Promise<void> {
    const status = String(response.status);
    const context = `${method.toUpperCase()} ${path} ${status}`;
    produced.add(`${path} ${method} ${status}`);
    const documented = document.paths[path]?.[method]?.responses[status];
    expect(documented, `${context} is documented`).toBeDefined();
    const documentedHeaders = Object.entries(documented?.headers ?? {});
    for (const [name, header] of documentedHeaders) {
      if (headerObject(header).required === true) {
        expect(response.headers.get(name), `${context}: required header ${name}`).not.toBeNull();
      }
    }
    const names = documentedHeaders.map(([name]) => name.toLowerCase());
    for (const name of DESCRIBABLE_HEADERS) {
      if (response.headers.has(name)) expect(names, `${context}: undocumented header ${name}`).toContain(name);
    }

    const text = await bodyText(response);
    if (documented?.content === undefined) {
      expect(text, context).toBe('');
      return;
    }
    const mediaType = response.headers.get('content-type')?.split(';')[0] ?? '';
    expect(Object.keys(documented.content), context).toContain(mediaType);
    if (!/^application\/(.+\+)?json$/.test(mediaType)) {
      expect(text.length, context).toBeGreaterThan(0);
      return;
    }
    const pointerSegment = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');
    const pointer = `openapi.json#/paths/${pointerSegment(path)}/${method}/responses/${status}/content/${pointerSegment(mediaType)}/schema`;
    const validate = ajv.getSchema(pointer);
    expect(validate, pointer).toBeDefined();
    const valid = validate!(JSON.parse(text));
    expect(validate!.errors ?? [], `${context}: ${text.slice(0, 300)}`).toEqual([]);
    expect(valid).toBe(true);
  }

  /** The body; of an event stream (which does not end), the first chunk. */
  async function bodyText(response: Response): Promise<string> {
    if (!response.headers.get('content-type')?.startsWith('text/event-stream') || response.body === null) {
      return response.text();
    }
    const reader = response.body.getReader();
    const { value } = await reader.read();
    await reader.cancel();
    return new TextDecoder().decode(value);
  }

  /** GET and HEAD of the same URL, each checked against its operation. */
  async function getAndHead(target: TestServer, path: string, url: string, init: RequestInit = {}): Promise<void> {
    await check(path, 'get', await fetch(`${target.url}${url}`, { redirect: 'manual', ...init }));
    await check(path, 'head', await fetch(`${target.url}${url}`, { redirect: 'manual', ...init, method: 'HEAD' }));
  }

  /** A method the path does not serve: the 405 every operation of the path documents. */
  async function methodNotAllowed(path: string, url: string): Promise<void> {
    const operations = (['get', 'head', 'post', 'delete'] as const).filter((method) => document.paths[path]?.[method]);
    for (const method of operations) {
      await check(path, method, await fetch(`${server.url}${url}`, { method: 'PUT' }));
    }
  }

  /** One webhook call, checked against its operation. */
  async function checkWebhookCall(
    target: TestServer,
    [path, method, url, body]: [string, Method, string, string | undefined],
    headers: Record<string, string>,
  ): Promise<void> {
    const init: RequestInit = {
      method: method.toUpperCase(),
      headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body }),
    };
    await check(path, method, await fetch(`${target.url}${url}`, init));
  }

  /** A server of its own for budgets, and one for a database that is down or broken. */
  async function withServer(
    database: DatabaseHandle,
    env: Record<string, string>,
    use: (server: TestServer) => Promise<void>,
  ) {
    const own = await startTestServer(database, { PUBLIC_URL, ...env });
    try {
      await use(own);
    } finally {
      await own.close();
    }
  }

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await seedDemoData(handle.db);
    server = await startTestServer(handle, { PUBLIC_URL, OWNER_CHECK_LIMIT: '100', PROFILE_LIMIT: '1000' });
    documentText = await (await fetch(`${server.url}${OPENAPI}`)).text();
    document = JSON.parse(documentText) as OpenApiDocument;
    ajv.addSchema(document, 'openapi.json');
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('is an OpenAPI 3.1 document of every path, with PUBLIC_URL as its server', () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(document.paths)).toEqual([
      OPENAPI,
      OWNER_CHECK,
      BATCH,
      PROFILE,
      AVATAR,
      VCARD,
      EVENTS,
      WEBFINGER,
      SEARCH,
      WALLET,
      CHANGES,
      CHANGE_EVENTS,
      WEBHOOKS,
      WEBHOOK,
      WEBHOOK_ENABLE,
      WEBHOOK_ROTATE,
      WEBHOOK_DELIVERIES,
      WEBHOOK_REPLAY,
    ]);
    expect(document.servers).toEqual([{ url: PUBLIC_URL, description: expect.any(String) }]);
  });

  it("passes Redocly's recommended rules without an error or warning", async () => {
    // One rule off: /api/wallet/{address} and /api/{name_id}/avatar look ambiguous to it, but a
    // name ID always has an "@", so "wallet" is never one (and the router prefers the literal).
    const config = await createConfig({ extends: ['recommended'], rules: { 'no-ambiguous-paths': 'off' } });
    const problems = await lintFromString({ source: documentText, absoluteRef: '/openapi.json', config });
    const described = problems.map(
      (problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`,
    );
    expect(described).toEqual([]);
  });

  it('describes every answer of the document itself', async () => {
    await getAndHead(server, OPENAPI, OPENAPI);
    await methodNotAllowed(OPENAPI, OPENAPI);
  });

  it('describes every answer of the lookups that draw on the profile budget', async () => {
    for (const lookup of LOOKUPS) {
      await getAndHead(server, lookup.path, lookup.found);
      if (lookup.missing !== undefined) await getAndHead(server, lookup.path, lookup.missing);
      await getAndHead(server, lookup.path, lookup.invalid);
      await methodNotAllowed(lookup.path, lookup.found);
      const response = await fetch(`${server.url}${lookup.found}`);
      const etag = response.headers.get('etag');
      if (etag !== null) await getAndHead(server, lookup.path, lookup.found, { headers: { 'If-None-Match': etag } });
    }
    await getAndHead(server, AVATAR, '/api/demo@me/avatar'); // 302 to the stored image (AVATAR_PROXY=off)
    await withServer(handle, { PROFILE_LIMIT: '1' }, async (limited) => {
      await fetch(`${limited.url}/api/demo@me`);
      for (const lookup of LOOKUPS) await getAndHead(limited, lookup.path, lookup.found);
    });
  });

  it('describes the avatar images the service fetches itself, and their fallbacks', async () => {
    const origin = await startImageOrigin('127.0.0.1');
    try {
      origin.route('/a.png', serve(await transparentPng(), 'image/png'));
      origin.route('/broken.png', serve('not an image', 'image/png'));
      const lines = ndjson(
        { kind: 'profile', name: 'openapi-image@me', creatorEmail: 'x@example.com', image: `${origin.url}/a.png` },
        {
          kind: 'profile',
          name: 'openapi-broken@me',
          creatorEmail: 'x@example.com',
          image: `${origin.url}/broken.png`,
        },
      );
      expect((await importLines(handle.db, lines)).problems).toEqual([]);
      const images = {
        AVATAR_PROXY: 'on',
        AVATAR_PRIVATE_ORIGINS: '127.0.0.1/32',
        PROFILE_CACHE_SIZE: '0',
        // Bounds this test is not about: the image answers, not a fallback, on a loaded machine too.
        AVATAR_FETCH_TIMEOUT_MS: '60000',
        AVATAR_RESIZES_PER_SECOND: '0',
      };
      await withServer(handle, images, async (proxy) => {
        for (const accept of ['image/webp', 'image/png', '*/*']) {
          await getAndHead(proxy, AVATAR, '/api/openapi-image@me/avatar?size=32', { headers: { Accept: accept } });
        }
        await getAndHead(proxy, AVATAR, '/api/openapi-image@me/avatar?size=32&format=jpeg');
        const etag = (await fetch(`${proxy.url}/api/openapi-image@me/avatar?size=32`)).headers.get('etag') ?? '';
        await getAndHead(proxy, AVATAR, '/api/openapi-image@me/avatar?size=32', { headers: { 'If-None-Match': etag } });
        await getAndHead(proxy, AVATAR, '/api/openapi-image@me/avatar?format=gif');
        await getAndHead(proxy, AVATAR, '/api/openapi-broken@me/avatar');
        await getAndHead(proxy, AVATAR, '/api/openapi-broken@me/avatar?fallback=404');
        await getAndHead(proxy, AVATAR, '/api/openapi-broken@me/avatar?fallback=https://cdn.example/a.png');
      });
    } finally {
      await origin.close();
    }
  });

  it('describes every answer of the live-update streams', async () => {
    await getAndHead(server, EVENTS, '/api/demo@me/events');
    await getAndHead(server, EVENTS, '/api/demo/events');
    await methodNotAllowed(EVENTS, '/api/demo@me/events');
    await getAndHead(server, CHANGE_EVENTS, `${CHANGE_EVENTS}?names=demo@me,empty@me`);
    await getAndHead(server, CHANGE_EVENTS, `${CHANGE_EVENTS}?namespace=me`, { headers: { 'Last-Event-ID': 'x' } });
    await getAndHead(server, CHANGE_EVENTS, CHANGE_EVENTS);
    await getAndHead(server, CHANGE_EVENTS, `${CHANGE_EVENTS}?names=demo@me,demo`);
    await methodNotAllowed(CHANGE_EVENTS, `${CHANGE_EVENTS}?names=demo@me`);
    await withServer(handle, { LIVE_SUBSCRIPTIONS_PER_CLIENT: '1' }, async (limited) => {
      const open = await fetch(`${limited.url}/api/demo@me/events`);
      await getAndHead(limited, EVENTS, '/api/demo@me/events'); // 429: the one slot is taken
      await getAndHead(limited, CHANGE_EVENTS, `${CHANGE_EVENTS}?names=demo@me`);
      await open.body?.cancel();
    });
  });

  it('describes the answer to a change-feed cursor whose entries were pruned', async () => {
    const first = (await (await fetch(`${server.url}${CHANGES}?limit=1`)).json()) as { next: string };
    await importLines(handle.db, ndjson({ kind: 'profile', name: 'openapi-pruned@me', creatorEmail: 'x@example.com' }));
    expect(await pruneLog(handle.db, new Date(Date.now() + 60_000))).toBeGreaterThan(1);
    await getAndHead(server, CHANGES, `${CHANGES}?after=${first.next}`);
  });

  it('describes every answer of the webhook endpoints', async () => {
    // 127.0.0.1 let through, so that endpoints can be made without an address outside the machine.
    await withServer(handle, { WEBHOOK_PRIVATE_ORIGINS: '127.0.0.1/32' }, async (own) => {
      const key = await createKey(handle);
      const auth = { Authorization: `Bearer ${key.key}` };
      const post = (url: string, body: string, headers: Record<string, string> = auth, type = 'application/json') =>
        fetch(`${own.url}${url}`, { method: 'POST', headers: { ...headers, 'Content-Type': type }, body });
      const made = await post(WEBHOOKS, JSON.stringify({ url: RECEIVER }));
      const { id } = (await made.clone().json()) as { id: string };
      await check(WEBHOOKS, 'post', made);
      const start = ((await (await fetch(`${own.url}${CHANGES}?after=now`)).json()) as { next: string }).next;
      const calls = webhookCalls(id, start);

      // Every call as it succeeds, then without a key, with an unknown key and with a key in the URL.
      for (const webhookCall of calls) await checkWebhookCall(own, webhookCall, auth);
      const again = webhookCalls(
        ((await (await post(WEBHOOKS, JSON.stringify({ url: RECEIVER }))).json()) as { id: string }).id,
        start,
      );
      for (const webhookCall of again) {
        const [path, method, url, body] = webhookCall;
        await checkWebhookCall(own, webhookCall, {});
        await checkWebhookCall(own, webhookCall, { 'X-API-Key': `nps_${'0'.repeat(40)}` });
        await checkWebhookCall(own, [path, method, `${url}?api_key=x`, body], {});
      }
      // Not found: the endpoint deleted by the last call of `calls`.
      for (const webhookCall of calls.filter(([path]) => path !== WEBHOOKS)) {
        await checkWebhookCall(own, webhookCall, auth);
      }

      // Bad input, bodies of the wrong form, and the eleventh endpoint.
      await check(WEBHOOKS, 'post', await post(WEBHOOKS, JSON.stringify({ url: 'https://169.254.169.254/' })));
      await check(WEBHOOKS, 'post', await post(WEBHOOKS, JSON.stringify({ url: RECEIVER, names: ['bad'] })));
      await check(WEBHOOKS, 'post', await post(WEBHOOKS, 'x'.repeat(70_000)));
      await check(WEBHOOKS, 'post', await post(WEBHOOKS, '{}', auth, 'text/plain'));
      for (let i = 0; i < 10; i += 1) await post(WEBHOOKS, JSON.stringify({ url: RECEIVER }));
      await check(WEBHOOKS, 'post', await post(WEBHOOKS, JSON.stringify({ url: RECEIVER })));
      const listed = (await (await fetch(`${own.url}${WEBHOOKS}`, { headers: auth })).json()) as {
        webhooks: Array<{ id: string }>;
      };
      const kept = listed.webhooks[0]?.id ?? '';
      const deliveries = `${WEBHOOKS}/${kept}/deliveries`;
      await getAndHead(own, WEBHOOK_DELIVERIES, `${deliveries}?limit=0`, { headers: auth });
      const replay = `${WEBHOOKS}/${kept}/replay`;
      await check(WEBHOOK_REPLAY, 'post', await post(replay, JSON.stringify({ after: 'x' })));
      await check(WEBHOOK_REPLAY, 'post', await post(replay, JSON.stringify({ after: 'x'.repeat(70_000) })));
      await check(WEBHOOK_REPLAY, 'post', await post(replay, '{}', auth, 'text/plain'));
      await importLines(handle.db, ndjson({ kind: 'profile', name: 'openapi-hook@me', creatorEmail: 'x@example.com' }));
      expect(await pruneLog(handle.db, new Date(Date.now() + 60_000))).toBeGreaterThan(0);
      await check(WEBHOOK_REPLAY, 'post', await post(replay, JSON.stringify({ after: start })));

      // A key whose budget is spent: 429 on every call.
      const limited = await createKey(handle, { profileLimit: 1 });
      const limitedAuth = { Authorization: `Bearer ${limited.key}` };
      await fetch(`${own.url}${WEBHOOKS}`, { headers: limitedAuth });
      for (const webhookCall of calls) await checkWebhookCall(own, webhookCall, limitedAuth);

      for (const path of [WEBHOOKS, WEBHOOK, WEBHOOK_ENABLE, WEBHOOK_ROTATE, WEBHOOK_DELIVERIES, WEBHOOK_REPLAY]) {
        await methodNotAllowed(path, path.replace('{id}', kept));
      }
    });
  });

  it('describes every answer of the batch lookup by POST', async () => {
    const post = (target: TestServer, body: string, type = 'application/json') =>
      fetch(`${target.url}${BATCH}`, { method: 'POST', headers: { 'Content-Type': type }, body });
    await check(BATCH, 'post', await post(server, '{"names":["demo@me","nobody@me"]}'));
    await check(BATCH, 'post', await post(server, '{"names":["demo"]}'));
    await check(BATCH, 'post', await post(server, 'x'.repeat(70_000)));
    await check(BATCH, 'post', await post(server, '{"names":["demo@me"]}', 'text/plain'));
    await withServer(handle, { PROFILE_LIMIT: '1' }, async (limited) => {
      await check(BATCH, 'post', await post(limited, '{"names":["a@me","b@me"]}'));
    });
  });

  it('describes every answer of the owner check', async () => {
    await withServer(handle, { OWNER_CHECK_LIMIT: '4' }, async (limited) => {
      await getAndHead(limited, OWNER_CHECK, '/api/owner-check?email=a@example.com&name=demo@me');
      await getAndHead(limited, OWNER_CHECK, '/api/owner-check?email=a@example.com');
      await getAndHead(limited, OWNER_CHECK, '/api/owner-check?email=a@example.com&name=demo@me'); // 429
    });
    await methodNotAllowed(OWNER_CHECK, OWNER_CHECK);
  });

  it('describes the answers to an invalid API key and to a key in the query string, on every path', async () => {
    const unknownKey = { 'X-API-Key': `nps_${'0'.repeat(40)}` };
    const targets: Array<[string, string]> = [
      [OPENAPI, OPENAPI],
      [OWNER_CHECK, '/api/owner-check?email=a@example.com&name=demo@me'],
      [EVENTS, '/api/demo@me/events'],
      [CHANGE_EVENTS, `${CHANGE_EVENTS}?names=demo@me`],
      ...LOOKUPS.map((lookup): [string, string] => [lookup.path, lookup.found]),
    ];
    for (const [path, url] of targets) {
      await getAndHead(server, path, url, { headers: unknownKey });
      await getAndHead(server, path, `${url}${url.includes('?') ? '&' : '?'}api_key=x`);
    }
    const post = (url: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${url}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: '{"names":["demo@me"]}',
      });
    await check(BATCH, 'post', await post(BATCH, { Authorization: 'Basic eDp5' }));
    await check(BATCH, 'post', await post(`${BATCH}?apiKey=x`));
    // Past the unknown keys an address may send (src/service/api-keys.ts): 429 on every path.
    await withServer(handle, {}, async (own) => {
      const madeUp = () => ({ 'X-API-Key': generateApiKey() });
      for (let i = 0; i < UNKNOWN_KEYS_PER_MINUTE; i += 1) await fetch(`${own.url}${OPENAPI}`, { headers: madeUp() });
      for (const [path, url] of targets) await getAndHead(own, path, url, { headers: madeUp() });
      await check(BATCH, 'post', await fetch(`${own.url}${BATCH}`, { method: 'POST', headers: madeUp(), body: '{}' }));
    });
  });

  it('describes 503 while the database cannot be reached', async () => {
    // A PostgreSQL URL on a loopback port where nothing listens.
    const unreachable = await openDatabase({
      url: 'postgres://postgres@127.0.0.1:1/none',
      dataDir: '',
      connectTimeoutSeconds: 1,
    });
    try {
      await withServer(unreachable, { OWNER_CHECK_LIMIT: '5' }, async (down) => {
        await everyLookupOn(down);
      });
    } finally {
      await unreachable.close();
    }
  });

  it('describes 500 when the database fails otherwise', async () => {
    // A closed embedded database fails every query with an error that is not an outage.
    const broken = await createTestDatabase('pglite');
    const brokenHandle = await broken.open();
    try {
      await withServer(brokenHandle, { OWNER_CHECK_LIMIT: '5' }, async (app) => {
        await brokenHandle.close();
        await everyLookupOn(app);
      });
    } finally {
      await broken.drop();
    }
  });

  /**
   * Each lookup, the owner check, the batch POST and every webhook call once (GET and HEAD), on a
   * failing database.
   */
  async function everyLookupOn(target: TestServer): Promise<void> {
    // The key cannot be checked: the answer is the database's failure.
    const keyed = { 'X-API-Key': generateApiKey() };
    for (const webhookCall of webhookCalls('wh_x', 'Y2wxOjE6MQ')) await checkWebhookCall(target, webhookCall, keyed);
    for (const lookup of LOOKUPS) await getAndHead(target, lookup.path, lookup.found);
    await getAndHead(target, OWNER_CHECK, '/api/owner-check?email=a@example.com&name=demo@me');
    const post = await fetch(`${target.url}${BATCH}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"names":["demo@me"]}',
    });
    await check(BATCH, 'post', post);
  }

  it('leaves no documented status unproduced', () => {
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        typeof operation === 'object' && operation !== null && 'responses' in operation
          ? Object.keys(operation.responses).map((status) => `${path} ${method} ${status}`)
          : [],
      ),
    );
    expect([...produced].sort()).toEqual(documented.sort());
  });
});
