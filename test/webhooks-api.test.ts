/**
 * The webhook endpoints API (`/api/webhooks…`, docs/webhooks.md) on every test database: each
 * route's answers and errors with the contract's shapes and messages, a key that sees and touches
 * only its own endpoints, at most 10 per key, the URL guard (schemes, credentials, length, names
 * that resolve to loopback, link-local or private addresses, WEBHOOK_PRIVATE_ORIGINS), secrets
 * shown only on create and rotate and kept sealed, rotation keeping the old secret, the
 * deliveries log, replay, enable, the budget, and `no-store` on every answer.
 *
 * Nothing leaves 127.0.0.0/8: host names resolve through the test's own table, and the one
 * receiver URL that deliveries may go to is a closed port on 127.0.0.1 (this suite is about the
 * management API; deliveries have suites of their own).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { revokeApiKey } from '../src/db/api-key-queries.js';
import { pruneLog } from '../src/db/change-log.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { findEndpoint, listEndpoints, setEndpointStatus } from '../src/db/webhook-queries.js';
import type { Resolver } from '../src/outbound/checked-target.js';
import { SecretStore } from '../src/webhooks/secrets.js';
import { createKey, type TestKey } from './support/api-keys.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { FRAGMENTS, hostileText, nameLike } from './support/hostile-text.js';

/** Host names of the tests, and what they resolve to; any other name does not resolve. */
const HOSTS: Readonly<Record<string, string[]>> = {
  'loopback.test': ['127.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'private.test': ['10.0.0.1'],
  // One public address and one private: the private one must not get through.
  'mixed.test': ['93.184.216.34', '10.0.0.1'],
};
const resolve: Resolver = async (hostname) => {
  const addresses = HOSTS[hostname];
  if (addresses === undefined)
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: 4 }));
};

/** Where deliveries of this suite would go: a closed port of 127.0.0.1 (connection refused). */
const RECEIVER = 'http://127.0.0.1:1/hook';
const SECRET_KEY = 'ab'.repeat(32);
const WEBHOOK_KEYS = [
  'id',
  'url',
  'names',
  'namespaces',
  'events',
  'description',
  'status',
  'disabledReason',
  'createdAt',
];
const WITH_SECRET_KEYS = [...WEBHOOK_KEYS.slice(0, -1), 'secret', 'createdAt'];
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SECRET = /^whsec_([A-Za-z0-9+/]{43}=)$/;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are what the tests check.
  body: any;
}

interface Call {
  key?: TestKey | string;
  body?: unknown;
  /** A raw body, sent as it is. */
  raw?: string;
  type?: string;
}

describe.each(databaseKinds())('the webhooks API on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  /** WEBHOOK_PRIVATE_ORIGINS=127.0.0.1/32, as a test deployment with its receivers on the machine. */
  let server: TestServer;
  /** No WEBHOOK_PRIVATE_ORIGINS: public addresses only. */
  let strict: TestServer;
  let alice: TestKey;
  let bob: TestKey;

  /** A call; every answer but the router's 405 must be `no-store`. */
  const call = async (method: string, path: string, options: Call = {}, target = server): Promise<Answer> => {
    const headers: Record<string, string> = {};
    const key = typeof options.key === 'string' ? options.key : options.key?.key;
    if (key !== undefined) headers.Authorization = `Bearer ${key}`;
    let body: string | undefined = options.raw;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['Content-Type'] = options.type ?? 'application/json';
    const response = await fetch(`${target.url}${path}`, { method, headers, body });
    const text = await response.text();
    if (response.status !== 405) {
      expect(response.headers.get('cache-control'), `${method} ${path} ${response.status}`).toBe('no-store');
    }
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: text === '' ? undefined : JSON.parse(text),
    };
  };
  const create = (key: TestKey, body: Record<string, unknown>, target = server) =>
    call('POST', '/api/webhooks', { key, body }, target);
  const refusal = (answer: Answer) => ({ status: answer.status, body: answer.body });

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    // A read past its deadline answers 503 (docs/database-outages.md), which a loaded machine can
    // cause; this suite is about what the API answers, so no deadline that load reaches: any 503
    // left is the service's own.
    handle = await testDb.open({ readTimeoutMs: 60_000 });
    await importLines(handle.db, ndjson({ kind: 'namespace', name: 'hooks', ownerEmail: 'owner@hooks.example' }));
    const env = { PROFILE_LIMIT: '10000', WEBHOOK_SECRET_KEY: SECRET_KEY };
    server = await startTestServer(handle, { ...env, WEBHOOK_PRIVATE_ORIGINS: '127.0.0.1/32' }, undefined, {
      webhookResolve: resolve,
    });
    strict = await startTestServer(handle, env, undefined, { webhookResolve: resolve });
    // Both share the database: the strict one answers the API only, so that every delivery is the
    // other's (an attempt of the strict one is refused at the address, which tests do not expect).
    await strict.app.webhooks.close();
    alice = await createKey(handle);
    bob = await createKey(handle);
  });
  afterAll(async () => {
    await server?.close();
    await strict?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('makes an endpoint: 201 with the contract shape, its secret once, and a Location', async () => {
    const made = await create(alice, {
      url: `${RECEIVER}/a`,
      names: ['Ada@HOOKS', 'ada@hooks', 'bob@hooks'],
      namespaces: ['hooks'],
      events: ['profile.updated', 'profile.created'],
      description: 'Search index',
    });
    expect(made.status).toBe(201);
    expect(Object.keys(made.body)).toEqual(WITH_SECRET_KEYS);
    expect(made.body).toMatchObject({
      id: expect.stringMatching(/^wh_[0-9A-Za-z]{24}$/),
      url: `${RECEIVER}/a`,
      names: ['ada@hooks', 'bob@hooks'],
      namespaces: ['hooks'],
      // In the contract's order, whatever order they were given in.
      events: ['profile.created', 'profile.updated'],
      description: 'Search index',
      status: 'active',
      disabledReason: null,
    });
    expect(made.body.createdAt).toMatch(ISO_UTC);
    const secret = SECRET.exec(made.body.secret)?.[1];
    expect(Buffer.from(secret ?? '', 'base64')).toHaveLength(32);
    expect(made.headers.get('location')).toBe(`${server.app.config.publicUrl}/api/webhooks/${made.body.id}`);
    expect(made.headers.get('ratelimit-limit')).toBe('6000');

    // Without names and namespaces: every change; without events: all three.
    const everything = await create(alice, { url: `${RECEIVER}/b` });
    expect(everything.body).toMatchObject({
      names: [],
      namespaces: [],
      events: ['profile.created', 'profile.updated', 'profile.removed'],
      description: null,
    });

    // Never again: not in the list, not in the endpoint, and sealed where it is stored.
    const listed = await call('GET', '/api/webhooks', { key: alice });
    expect(listed.status).toBe(200);
    expect(Object.keys(listed.body)).toEqual(['webhooks']);
    const ids = listed.body.webhooks.map((webhook: { id: string }) => webhook.id);
    expect(ids).toEqual(expect.arrayContaining([made.body.id, everything.body.id]));
    for (const webhook of listed.body.webhooks) expect(Object.keys(webhook)).toEqual(WEBHOOK_KEYS);
    const one = await call('GET', `/api/webhooks/${made.body.id}`, { key: alice });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(Object.fromEntries(Object.entries(made.body).filter(([field]) => field !== 'secret')));
    for (const answer of [listed, one]) expect(answer.text).not.toContain(secret);
    const stored = await findEndpoint(handle.db, alice.id, made.body.id);
    expect(stored?.secret).toMatch(/^aes256gcm:/);
    expect(stored?.secret).not.toContain(secret);
    expect(new SecretStore(Buffer.from(SECRET_KEY, 'hex')).open(stored?.secret ?? '', made.body.id)).toEqual(
      Buffer.from(secret ?? '', 'base64'),
    );

    const head = await call('HEAD', '/api/webhooks', { key: alice });
    expect(head).toMatchObject({ status: 200, text: '' });
  });

  it('answers 401 without a key, on every route, before reading the body or drawing on a budget', async () => {
    const routes: Array<[string, string]> = [
      ['GET', '/api/webhooks'],
      ['HEAD', '/api/webhooks'],
      ['POST', '/api/webhooks'],
      ['GET', '/api/webhooks/wh_x'],
      ['DELETE', '/api/webhooks/wh_x'],
      ['POST', '/api/webhooks/wh_x/enable'],
      ['POST', '/api/webhooks/wh_x/rotate-secret'],
      ['GET', '/api/webhooks/wh_x/deliveries'],
      ['POST', '/api/webhooks/wh_x/replay'],
    ];
    for (const [method, path] of routes) {
      const answer = await call(method, path, method === 'POST' ? { raw: 'not json', type: 'text/plain' } : {});
      expect({ method, path, status: answer.status }).toEqual({ method, path, status: 401 });
      if (method !== 'HEAD') expect(answer.body).toEqual({ error: 'An API key is required' });
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      expect(answer.headers.get('ratelimit-limit')).toBeNull();

      const unknown = await call(method, path, { key: `nps_${'0'.repeat(40)}` });
      expect(unknown.status).toBe(401);
      if (method !== 'HEAD') expect(unknown.body).toEqual({ error: 'Invalid API key' });
      expect(unknown.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it("keeps each key to its own endpoints: another key's id is not found, and stays as it was", async () => {
    const mine = (await create(alice, { url: `${RECEIVER}/mine`, names: ['ada@hooks'] })).body;
    const notFound = { status: 404, body: { error: 'Webhook not found' } };
    const attempts: Array<[string, string, Call]> = [
      ['GET', '', {}],
      ['DELETE', '', {}],
      ['POST', '/enable', {}],
      ['POST', '/rotate-secret', {}],
      ['GET', '/deliveries', {}],
      ['POST', '/replay', { body: { after: (await call('GET', '/api/changes?after=now')).body.next } }],
    ];
    for (const [method, suffix, options] of attempts) {
      expect(refusal(await call(method, `/api/webhooks/${mine.id}${suffix}`, { ...options, key: bob }))).toEqual(
        notFound,
      );
      // An id no endpoint has answers alike: nobody learns which ids exist.
      expect(
        refusal(await call(method, `/api/webhooks/wh_${'0'.repeat(24)}${suffix}`, { ...options, key: alice })),
      ).toEqual(notFound);
    }
    expect(
      (await call('GET', '/api/webhooks', { key: bob })).body.webhooks.map((w: { id: string }) => w.id),
    ).not.toContain(mine.id);
    const before = await findEndpoint(handle.db, alice.id, mine.id);
    expect((await call('GET', `/api/webhooks/${mine.id}`, { key: alice })).body).toEqual(
      Object.fromEntries(Object.entries(mine).filter(([field]) => field !== 'secret')),
    );
    expect(before?.secret).toBe((await findEndpoint(handle.db, alice.id, mine.id))?.secret);
    // An id that cannot be decoded is no endpoint either.
    expect(refusal(await call('GET', '/api/webhooks/%E0%A4%A', { key: alice }))).toEqual(notFound);
  });

  it('allows 10 endpoints per key: the 11th is 409, other keys are not affected', async () => {
    const carol = await createKey(handle);
    for (let i = 0; i < 10; i += 1) expect((await create(carol, { url: `${RECEIVER}/${i}` })).status).toBe(201);
    const eleventh = await create(carol, { url: `${RECEIVER}/10` });
    expect(refusal(eleventh)).toEqual({ status: 409, body: { error: 'At most 10 webhooks per API key' } });
    expect((await call('GET', '/api/webhooks', { key: carol })).body.webhooks).toHaveLength(10);
    const dave = await createKey(handle);
    expect((await create(dave, { url: RECEIVER })).status).toBe(201);
    // Deleting one makes room for one.
    const first = (await call('GET', '/api/webhooks', { key: carol })).body.webhooks[0];
    expect((await call('DELETE', `/api/webhooks/${first.id}`, { key: carol })).status).toBe(204);
    expect((await create(carol, { url: `${RECEIVER}/10` })).status).toBe(201);
  });

  it('refuses URLs the service may not reach, and http except to WEBHOOK_PRIVATE_ORIGINS', async () => {
    const refused = async (url: string, target = strict) => {
      const answer = await create(alice, { url }, target);
      expect({ url, status: answer.status }).toEqual({ url, status: 400 });
      return answer.body.error as string;
    };
    expect(await refused('http://93.184.216.34/hook')).toMatch(/http is allowed only to networks .* use https/);
    expect(await refused('https://user:secret@93.184.216.34/hook')).toMatch(/credentials in the URL refused/);
    expect(await refused(`https://93.184.216.34/${'a'.repeat(2048)}`)).toBe('The url is longer than 2048 characters');
    expect(await refused('https://loopback.test/hook')).toContain('resolves to refused address 127.0.0.1');
    expect(await refused('https://metadata.test/hook')).toContain('resolves to refused address 169.254.169.254');
    expect(await refused('https://private.test/hook')).toContain('resolves to refused address 10.0.0.1');
    expect(await refused('https://mixed.test/hook')).toContain('resolves to refused address 10.0.0.1');
    expect(await refused('https://nowhere.test/hook')).toContain('not resolved');
    for (const literal of ['127.0.0.1', '169.254.169.254', '10.0.0.1', '[::1]', '0x7f000001']) {
      expect(await refused(`https://${literal}/hook`)).toMatch(/^The url is refused: address .* refused$/);
    }
    expect(await refused('ftp://93.184.216.34/hook')).toContain('scheme ftp: refused');
    expect(await refused('not a url')).toContain('not a URL');
    expect(await refused('')).toBe('The url is required, a string');
    // 127.0.0.1/32 is let through, over http too, where WEBHOOK_PRIVATE_ORIGINS lists it; the
    // rest of 127.0.0.0/8 and the other private networks are not.
    expect(await refused('http://127.0.0.1:1/hook')).toContain('address 127.0.0.1 refused');
    expect((await create(alice, { url: 'http://127.0.0.1:1/allowed' }, server)).status).toBe(201);
    expect((await create(alice, { url: 'https://loopback.test:1/allowed' }, server)).status).toBe(201);
    expect(await refused('http://127.0.0.2:1/hook', server)).toContain('address 127.0.0.2 refused');
    expect(await refused('https://metadata.test/hook', server)).toContain('169.254.169.254');
    // Nothing refused was kept.
    const urls = (await call('GET', '/api/webhooks', { key: alice })).body.webhooks.map((w: { url: string }) => w.url);
    expect(urls.filter((url: string) => !url.startsWith(RECEIVER) && !url.endsWith('/allowed'))).toEqual([]);
  });

  it('refuses bad names, namespaces, event types, descriptions and fields with 400', async () => {
    const refused = async (body: Record<string, unknown>) => {
      const answer = await create(alice, { url: RECEIVER, ...body });
      expect({ body, status: answer.status }).toEqual({ body, status: 400 });
      expect(answer.headers.get('ratelimit-limit')).not.toBeNull();
      return answer.body;
    };
    const names = Array.from({ length: 1001 }, (_, i) => `n${i}@hooks`);
    expect(await refused({ names })).toEqual({ error: 'At most 1000 names' });
    expect((await create(alice, { url: RECEIVER, names: names.slice(0, 1000) })).status).toBe(201);
    expect(await refused({ names: ['ada@hooks', 'not-a-name'] })).toEqual({
      error: 'Invalid name format, expected <local>@<domain>',
      name: 'not-a-name',
    });
    expect(await refused({ names: 'ada@hooks' })).toEqual({ error: 'The names must be an array of strings' });
    expect(await refused({ namespaces: ['bad namespace'] })).toEqual({ error: 'Invalid namespace: "bad namespace"' });
    expect(await refused({ events: ['profile.deleted'] })).toEqual({
      error: 'Unknown event type "profile.deleted", expected profile.created, profile.updated, profile.removed',
    });
    expect((await refused({ events: [] })).error).toContain('At least one event type is required');
    expect((await refused({ description: 'x'.repeat(501) })).error).toContain('at most 500 characters');
    expect((await refused({ description: 7 })).error).toContain('The description must be a string');
    expect(await refused({ url: 42 })).toEqual({ error: 'The url is required, a string' });
    // Text the database cannot store is bad input, not a failure of the service.
    for (const description of ['a\u0000b', 'a\ud800b']) {
      expect(await refused({ description })).toEqual({ error: 'The description holds U+0000 or a lone surrogate' });
    }
    expect(await refused({ url: `${RECEIVER}/\u0000` })).toEqual({
      error: 'The url holds U+0000 or a lone surrogate',
    });
    expect((await refused({ names: ['a\u0000@hooks'] })).error).toBe('Invalid name format, expected <local>@<domain>');
    expect((await refused({ namespaces: ['ho\u0000oks'] })).error).toMatch(/^Invalid namespace/);
    // A misspelt field is refused, not ignored (an `event` ignored would subscribe to everything).
    expect(await refused({ event: ['profile.removed'] })).toEqual({
      error: 'Unknown field "event", expected url, names, namespaces, events, description',
    });
  });

  it('reads only JSON objects of at most 64 KiB: 415, 413 and 400 otherwise, none of them drawing', async () => {
    const post = (options: Call) => call('POST', '/api/webhooks', { key: alice, ...options });
    const noDraw = (answer: Answer) => expect(answer.headers.get('ratelimit-limit')).toBeNull();
    const wrongType = await post({ raw: JSON.stringify({ url: RECEIVER }), type: 'text/plain' });
    expect(refusal(wrongType)).toEqual({ status: 415, body: { error: 'Expected application/json' } });
    noDraw(wrongType);
    const tooLarge = await post({ raw: JSON.stringify({ url: RECEIVER, description: 'x'.repeat(70_000) }) });
    expect(refusal(tooLarge)).toEqual({
      status: 413,
      body: { error: 'Request body too large, the limit is 65536 bytes' },
    });
    noDraw(tooLarge);
    for (const raw of ['{"url":', '[]', '"https://a.example"', 'null', '\u00ff']) {
      const answer = await post({ raw });
      expect({ raw, ...refusal(answer) }).toEqual({ raw, status: 400, body: { error: 'Invalid JSON body' } });
      noDraw(answer);
    }
    // The replay's body alike.
    const id = (await create(alice, { url: RECEIVER })).body.id;
    const replay = (options: Call) => call('POST', `/api/webhooks/${id}/replay`, { key: alice, ...options });
    expect((await replay({ raw: '{}', type: 'text/plain' })).status).toBe(415);
    expect(refusal(await replay({ raw: '[1]' }))).toEqual({ status: 400, body: { error: 'Invalid JSON body' } });
  });

  it('answers hostile bodies with 201 or a JSON 400, never a failure of its own', async () => {
    const hostile = await createKey(handle);
    const text = fc.oneof(hostileText, fc.constantFrom(...FRAGMENTS), fc.string({ unit: 'binary' }));
    const junk = fc.oneof(text, fc.array(fc.oneof(text, nameLike), { maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }));
    // Mostly valid fields, so that a body often gets past the others to the one that is hostile.
    const mostly = <T>(valid: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: junk as fc.Arbitrary<unknown>, weight: 1 });
    const body = fc.record(
      {
        url: mostly(
          fc.oneof(
            fc.constant(RECEIVER),
            text.map((path) => `${RECEIVER}/${path}`),
          ),
        ),
        names: mostly(fc.array(fc.oneof(fc.constant('ada@hooks'), nameLike), { maxLength: 3 })),
        namespaces: mostly(fc.constantFrom([], ['hooks'])),
        events: mostly(fc.constantFrom(['profile.created'], ['profile.removed', 'profile.updated'])),
        description: mostly(fc.oneof(text, fc.constant(null))),
      },
      { requiredKeys: ['url'] },
    );
    await fc.assert(
      fc.asyncProperty(body, async (input) => {
        const made = await create(hostile, input);
        const context = `${made.status} ${JSON.stringify(input).slice(0, 300)}`;
        expect([201, 400], context).toContain(made.status);
        if (made.status === 400) {
          expect(typeof made.body.error, context).toBe('string');
          return;
        }
        expect(Object.keys(made.body), context).toEqual(WITH_SECRET_KEYS);
        const replay = await call('POST', `/api/webhooks/${made.body.id}/replay`, {
          key: hostile,
          body: { after: input.description },
        });
        expect([202, 400, 410], context).toContain(replay.status);
        expect((await call('DELETE', `/api/webhooks/${made.body.id}`, { key: hostile })).status).toBe(204);
      }),
      { numRuns: 300 },
    );
  }, 180_000);

  it('rotates the secret: the new one shown once, the old one kept signing for 24 hours', async () => {
    const made = (await create(alice, { url: RECEIVER })).body;
    const before = await findEndpoint(handle.db, alice.id, made.id);
    const started = Date.now();
    const rotated = await call('POST', `/api/webhooks/${made.id}/rotate-secret`, { key: alice });
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body)).toEqual(WITH_SECRET_KEYS);
    expect(rotated.body.secret).toMatch(SECRET);
    expect(rotated.body.secret).not.toBe(made.secret);
    const after = await findEndpoint(handle.db, alice.id, made.id);
    expect(after?.previousSecret).toBe(before?.secret);
    const until = after?.previousSecretUntil?.getTime() ?? 0;
    expect(until).toBeGreaterThanOrEqual(started + 24 * 3600_000 - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 1000);
    const store = new SecretStore(Buffer.from(SECRET_KEY, 'hex'));
    const bytes = (shown: string) => Buffer.from(shown.slice('whsec_'.length), 'base64');
    expect(store.open(after?.secret ?? '', made.id)).toEqual(bytes(rotated.body.secret));
    expect(store.open(after?.previousSecret ?? '', made.id)).toEqual(bytes(made.secret));
    expect((await call('GET', `/api/webhooks/${made.id}`, { key: alice })).text).not.toContain(
      rotated.body.secret.slice(6),
    );
  });

  it('enables a disabled endpoint, and leaves an active one as it is', async () => {
    const made = (await create(alice, { url: RECEIVER })).body;
    await setEndpointStatus(handle.db, undefined, made.id, 'disabled', 'the endpoint answered 410 Gone');
    expect((await call('GET', `/api/webhooks/${made.id}`, { key: alice })).body).toMatchObject({
      status: 'disabled',
      disabledReason: 'the endpoint answered 410 Gone',
    });
    const enabled = await call('POST', `/api/webhooks/${made.id}/enable`, { key: alice });
    expect(enabled.status).toBe(200);
    expect(Object.keys(enabled.body)).toEqual(WEBHOOK_KEYS);
    expect(enabled.body).toMatchObject({ id: made.id, status: 'active', disabledReason: null });
    expect((await findEndpoint(handle.db, alice.id, made.id))?.status).toBe('active');
    const again = await call('POST', `/api/webhooks/${made.id}/enable`, { key: alice });
    expect(again.body).toEqual(enabled.body);
  });

  it('deletes: 204 without a body, then 404', async () => {
    const made = (await create(alice, { url: RECEIVER })).body;
    const deleted = await call('DELETE', `/api/webhooks/${made.id}`, { key: alice });
    expect(deleted).toMatchObject({ status: 204, text: '' });
    expect(deleted.headers.get('content-length')).toBeNull();
    expect(await findEndpoint(handle.db, alice.id, made.id)).toBeUndefined();
    for (const method of ['GET', 'DELETE']) {
      expect(refusal(await call(method, `/api/webhooks/${made.id}`, { key: alice }))).toEqual({
        status: 404,
        body: { error: 'Webhook not found' },
      });
    }
  });

  it('replays from a cursor (202), lists the attempts in the deliveries log, and refuses bad cursors', async () => {
    const start = (await call('GET', '/api/changes?after=now')).body.next as string;
    await importLines(
      handle.db,
      ndjson({ kind: 'profile', name: 'replay@hooks', creatorEmail: 'x@example.com', description: 'One' }),
    );
    // Made after the change: only a replay brings it.
    const made = (await create(alice, { url: RECEIVER, names: ['replay@hooks'] })).body;
    const log = `/api/webhooks/${made.id}/deliveries`;
    expect((await call('GET', log, { key: alice })).body).toEqual({ deliveries: [] });

    const replayed = await call('POST', `/api/webhooks/${made.id}/replay`, { key: alice, body: { after: start } });
    expect(replayed.status).toBe(202);
    expect(Object.keys(replayed.body)).toEqual(WEBHOOK_KEYS);
    expect(replayed.body.id).toBe(made.id);

    // The receiver's port is closed: the attempt fails, and the log says so.
    const deliveries = await eventually(async () => {
      const answer = await call('GET', log, { key: alice });
      return answer.body.deliveries.length > 0 && answer.body.deliveries;
    }, 'the replayed change attempted');
    expect(Object.keys(deliveries[0])).toEqual([
      'eventId',
      'type',
      'name',
      'attempt',
      'at',
      'status',
      'durationMs',
      'error',
      'nextAttemptAt',
    ]);
    expect(deliveries[0]).toMatchObject({
      eventId: expect.stringMatching(/^msg_/),
      type: 'profile.created',
      name: 'replay@hooks',
      attempt: 1,
      status: null,
      error: 'connection refused',
    });
    expect(deliveries[0].at).toMatch(ISO_UTC);
    expect(deliveries[0].nextAttemptAt).toMatch(ISO_UTC);
    expect(deliveries[0].durationMs).toBeGreaterThanOrEqual(0);

    const refused = async (body: unknown) =>
      refusal(await call('POST', `/api/webhooks/${made.id}/replay`, { key: alice, body }));
    for (const after of ['x', 'now', '', start.slice(0, -1)]) {
      expect(await refused({ after })).toEqual({ status: 400, body: { error: 'Invalid cursor' } });
    }
    expect(await refused({})).toEqual({ status: 400, body: { error: 'The after cursor is required, a string' } });
    expect(await refused({ after: start, from: start })).toEqual({
      status: 400,
      body: { error: 'Unknown field "from", expected after' },
    });
    expect(
      refusal(await call('POST', `/api/webhooks/wh_nothere/replay`, { key: alice, body: { after: start } })),
    ).toEqual({ status: 404, body: { error: 'Webhook not found' } });

    // The limit of the log's page.
    for (const limit of ['0', '101', 'x', '1.5', '-1', '1&limit=2']) {
      expect(refusal(await call('GET', `${log}?limit=${limit}`, { key: alice }))).toEqual({
        status: 400,
        body: { error: 'Invalid limit, expected an integer from 1 to 100' },
      });
    }
    for (const limit of ['1', '100', ''])
      expect((await call('GET', `${log}?limit=${limit}`, { key: alice })).status).toBe(200);

    // Everything is pruned: the cursor from before is older than the log keeps.
    expect(await pruneLog(handle.db, new Date(Date.now() + 60_000))).toBeGreaterThan(0);
    expect(await refused({ after: start })).toEqual({
      status: 410,
      body: { error: 'Cursor is older than the change log keeps' },
    });
    const end = (await call('GET', '/api/changes?after=now')).body.next as string;
    expect((await call('POST', `/api/webhooks/${made.id}/replay`, { key: alice, body: { after: end } })).status).toBe(
      202,
    );
  });

  it("draws one point of the key's profile budget per call, and answers 429 past it", async () => {
    const limited = await createKey(handle, { profileLimit: 2 });
    const first = await call('GET', '/api/webhooks', { key: limited });
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    const invalid = await call('GET', '/api/webhooks/wh_nothere', { key: limited });
    expect(invalid.status).toBe(404);
    expect(invalid.headers.get('ratelimit-remaining')).toBe('0');
    const over = await create(limited, { url: RECEIVER });
    expect(over.status).toBe(429);
    expect(over.body.error).toMatch(/^Too many requests, retry in \d+ seconds$/);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
    // Refused before the service: nothing was made.
    expect(await listEndpoints(handle.db, limited.id)).toEqual([]);
  });

  it('serves only its methods: 405 with Allow, and CORS preflights with DELETE', async () => {
    for (const [method, path, allow] of [
      ['PUT', '/api/webhooks', 'GET, HEAD, POST'],
      ['DELETE', '/api/webhooks', 'GET, HEAD, POST'],
      ['POST', '/api/webhooks/wh_x', 'GET, HEAD, DELETE'],
      ['GET', '/api/webhooks/wh_x/enable', 'POST'],
      ['DELETE', '/api/webhooks/wh_x/rotate-secret', 'POST'],
      ['POST', '/api/webhooks/wh_x/deliveries', 'GET, HEAD'],
      ['GET', '/api/webhooks/wh_x/replay', 'POST'],
    ] as const) {
      const answer = await call(method, path, { key: alice });
      expect({ method, path, status: answer.status, allow: answer.headers.get('allow') }).toEqual({
        method,
        path,
        status: 405,
        allow,
      });
    }
    const preflight = await fetch(`${server.url}/api/webhooks/wh_x`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'DELETE',
        'Access-Control-Request-Headers': 'authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD, DELETE');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
  });

  it("forgets nothing of a revoked key's endpoints, but answers the key 401", async () => {
    const erin = await createKey(handle);
    const made = (await create(erin, { url: RECEIVER })).body;
    expect(await revokeApiKey(handle.db, erin.id)).toBe('revoked');
    const refused = await eventually(async () => {
      const answer = await call('GET', '/api/webhooks', { key: erin });
      return answer.status === 401 && answer;
    }, 'the revocation heard');
    expect(refused.body).toEqual({ error: 'Invalid API key' });
    expect(await findEndpoint(handle.db, erin.id, made.id)).toBeDefined();
  });
});
