/**
 * Edge caching without a real cache: the tags and caching headers of every shareable answer,
 * compression per coding, and the purger against a fake purge endpoint on 127.0.0.1 (its retries,
 * its backlog bound, its leadership, and what it refuses to send). The same behaviour through a
 * real Varnish is in edge-cache-varnish.test.ts (system tier).
 */
import zlib from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { EdgeCaching, EdgeReads, keyedCacheControl } from '../src/edge/edge-caching.js';
import { Purger } from '../src/edge/purge-queues.js';
import { PurgeError, sendPurge, tagHeaderValues } from '../src/edge/purge-request.js';
import { ALL_TAG, profileTag, tagsOfChange } from '../src/edge/tags.js';
import { AVAILABLE_CODINGS, type Coding, encodeBody, negotiateCoding } from '../src/http/compression.js';
import { createLogger } from '../src/logging/logger.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { type FakePurgeEndpoint, startFakePurgeEndpoint } from './support/fake-purge-endpoint.js';

const silent = createLogger('silent', { pretty: false });
/**
 * A purge is promised within a second of its commit; the tests allow a loaded machine more and
 * check what load cannot blur: the purge is sent at once, not with the settling purge after it.
 */
const PURGE_BOUND_MS = 5000;

function decode(body: Buffer, coding: string | null): string {
  switch (coding) {
    case 'br':
      return zlib.brotliDecompressSync(body).toString('utf8');
    case 'gzip':
      return zlib.gunzipSync(body).toString('utf8');
    case 'zstd':
      return zlib.zstdDecompressSync(body).toString('utf8');
    case null:
      return body.toString('utf8');
    default:
      throw new Error(`unexpected coding ${coding}`);
  }
}

/** A GET whose body comes back as sent (undici's fetch would decode it and hide the coding). */
async function rawGet(url: string, headers: Record<string, string> = {}) {
  const { request } = await import('node:http');
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = request(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

describe('cache tags', () => {
  it('name every profile, its namespace and the listings a change can alter', () => {
    const tags = tagsOfChange({ kind: 'names', names: ['a@x', 'b@y'] });
    expect(tags).toEqual(
      expect.arrayContaining(['p:a%40x', 'p:b%40y', 'ns:x', 'ns:y', 'search', 'wallets', 'name-check']),
    );
    expect(tagsOfChange({ kind: 'everything' })).toBeUndefined();
  });

  it('cannot carry a space, comma or line break into a header, whatever the name', () => {
    for (const name of ['a b@x', 'a,b@x', 'a\r\nxkey: all@x', 'алиса@мир', 'zoë.müller@studio']) {
      expect(profileTag(name)).toMatch(/^[\x21-\x2b\x2d-\x7e]+$/);
    }
  });
});

describe('caching headers of shareable answers', () => {
  const settings = { maxAgeSeconds: 60, sharedMaxAgeSeconds: 86_400 };

  it('without purging: the profile Cache-Control as before, no s-maxage, no tags', () => {
    const edge = new EdgeCaching({ ...settings, purging: false }, () => true);
    expect(edge.headers(undefined)).toEqual({ 'Cache-Control': 'public, max-age=60' });
    expect(edge.headers(undefined, false)).toEqual({});
  });

  it('with purging: s-maxage for shared caches, browsers at most five minutes, and the tags', () => {
    const edge = new EdgeCaching({ maxAgeSeconds: 3600, sharedMaxAgeSeconds: 86_400, purging: true }, () => true);
    const reads = edge.begin(undefined) as EdgeReads;
    reads.tags.add(profileTag('demo@me'));
    expect(edge.headers({ edge: reads })).toEqual({
      'Cache-Control': 'public, max-age=300, s-maxage=86400',
      xkey: 'all p:demo%40me',
      'Surrogate-Key': 'all p:demo%40me',
    });
  });

  it('an answer read around a change, or while the feed is not live, is private', () => {
    let live = true;
    const edge = new EdgeCaching({ ...settings, purging: true }, () => live);
    const reads = edge.begin(undefined) as EdgeReads;
    edge.changed();
    expect(edge.headers({ edge: reads })).toEqual({ 'Cache-Control': 'private, max-age=60' });
    const later = edge.begin(undefined) as EdgeReads;
    live = false;
    expect(edge.headers({ edge: later })).toEqual({ 'Cache-Control': 'private, max-age=60' });
    live = true;
    later.shareable = false;
    expect(edge.headers({ edge: later })['Cache-Control']).toBe('private, max-age=60');
  });

  it('tags too long for a cache header line make the answer private rather than cut', () => {
    const edge = new EdgeCaching({ ...settings, purging: true }, () => true);
    const reads = new EdgeReads(0);
    for (let index = 0; index < 400; index += 1) reads.tags.add(profileTag(`name-${index}@somewhere`));
    expect(edge.headers({ edge: reads })['Cache-Control']).toBe('private, max-age=60');
  });

  it('an answer to a request with an API key is private, with the max-age browsers get, no s-maxage, no tags', () => {
    const apiKey = { id: 'key_test' };
    const plain = new EdgeCaching({ ...settings, purging: false }, () => true);
    expect(plain.headers({ edge: undefined, apiKey })).toEqual({ 'Cache-Control': 'private, max-age=60' });
    expect(plain.headers({ edge: undefined, apiKey }, false)).toEqual({ 'Cache-Control': 'private' });
    const purged = new EdgeCaching({ maxAgeSeconds: 3600, sharedMaxAgeSeconds: 86_400, purging: true }, () => true);
    const reads = purged.begin(undefined) as EdgeReads;
    reads.tags.add(profileTag('demo@me'));
    // Shareable as far as its reads go: the key alone keeps it out of shared caches.
    expect(purged.headers({ edge: reads })['Cache-Control']).toBe('public, max-age=300, s-maxage=86400');
    expect(purged.headers({ edge: reads, apiKey })).toEqual({ 'Cache-Control': 'private, max-age=300' });
    expect(purged.headers({ edge: reads, apiKey }, false)).toEqual({ 'Cache-Control': 'private, max-age=300' });
  });

  it.each([
    ['public, max-age=60', 'private, max-age=60'],
    ['public, max-age=300, s-maxage=86400', 'private, max-age=300'],
    ['public, max-age=31536000, immutable', 'private, max-age=31536000, immutable'],
    ['PUBLIC,max-age=5,S-MAXAGE=10', 'private, max-age=5'],
    ['private, max-age=60', 'private, max-age=60'],
    ['no-store', 'no-store'],
  ])('a keyed answer turns %s into %s', (control, keyed) => {
    expect(keyedCacheControl(control)).toBe(keyed);
  });
});

describe('Accept-Encoding negotiation', () => {
  it('follows q-values, wildcards and refusals', () => {
    expect(negotiateCoding(undefined)).toBeUndefined();
    expect(negotiateCoding('identity')).toBeUndefined();
    expect(negotiateCoding('gzip, deflate')).toBe('gzip');
    expect(negotiateCoding('gzip, br')).toBe('br');
    expect(negotiateCoding('br;q=0.5, gzip;q=0.9')).toBe('gzip');
    expect(negotiateCoding('br;q=0, gzip;q=0')).toBeUndefined();
    expect(negotiateCoding('*')).toBe('br');
    expect(negotiateCoding('*;q=0.1, br;q=0')).toBe(AVAILABLE_CODINGS.includes('zstd') ? 'zstd' : 'gzip');
    expect(negotiateCoding('x-gzip')).toBe('gzip');
    expect(negotiateCoding('BR')).toBe('br');
  });
});

describe('compressed bodies', () => {
  it('are kept for answers with an ETag, so a hot answer is compressed once', () => {
    const body = JSON.stringify({ description: 'y'.repeat(4000) });
    const first = encodeBody(body, 'br', 'application/json\n"hot"');
    const again = encodeBody(body, 'br', 'application/json\n"hot"');
    expect(first.encoding).toBe('br');
    expect(again.body).toBe(first.body);
    expect(encodeBody(body, 'br').body).not.toBe(first.body);
    expect(decode(first.body as Buffer, 'br')).toBe(body);
  });

  it('are not made below 1 KiB or without a negotiated coding', () => {
    expect(encodeBody('x'.repeat(1023), 'gzip')).toEqual({ body: 'x'.repeat(1023), encoding: undefined });
    expect(encodeBody('x'.repeat(5000), undefined).encoding).toBeUndefined();
  });
});

describe('the purge request', () => {
  let endpoint: FakePurgeEndpoint;
  beforeAll(async () => {
    endpoint = await startFakePurgeEndpoint();
  });
  afterAll(async () => {
    await endpoint.close();
  });
  afterEach(() => {
    endpoint.answer = 200;
    endpoint.location = undefined;
  });

  it('is PURGE / with the tags in xkey', async () => {
    await sendPurge(endpoint.url, ['p:a%40x', 'all']);
    const seen = endpoint.requests.at(-1);
    expect(seen).toMatchObject({ method: 'PURGE', path: '/', xkey: 'p:a%40x all' });
  });

  it('refuses tags that could add a tag or a header line, before sending anything', async () => {
    const before = endpoint.requests.length;
    for (const tag of ['a b', 'a,b', 'a\r\nHost: evil', '', 'p:\u00e9']) {
      await expect(sendPurge(endpoint.url, ['ok', tag])).rejects.toBeInstanceOf(PurgeError);
    }
    expect(endpoint.requests.length).toBe(before);
  });

  it('splits many tags over several requests, each within a header line limit', () => {
    const tags = Array.from({ length: 2000 }, (_, index) => `p:name-${index}%40x`);
    const values = tagHeaderValues(tags);
    expect(values.length).toBeGreaterThan(1);
    for (const value of values) expect(value.length).toBeLessThanOrEqual(4000);
    expect(values.join(' ').split(' ')).toEqual(tags);
  });

  it('fails on an error status, does not follow a redirect, and gives up at its deadline', async () => {
    const elsewhere = await startFakePurgeEndpoint();
    try {
      endpoint.answer = 500;
      await expect(sendPurge(endpoint.url, ['all'])).rejects.toThrow(/answered 500/);
      endpoint.answer = 307;
      endpoint.location = `${elsewhere.url}/`;
      await expect(sendPurge(endpoint.url, ['all'])).rejects.toThrow(/answered 307/);
      expect(elsewhere.requests).toEqual([]);
      endpoint.answer = 'hang';
      const started = Date.now();
      await expect(sendPurge(endpoint.url, ['all'], 300)).rejects.toThrow(/failed/);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await elsewhere.close();
    }
  });
});

describe('the purger', () => {
  let endpoint: FakePurgeEndpoint;
  let other: FakePurgeEndpoint;
  const purgers: Purger[] = [];
  beforeAll(async () => {
    endpoint = await startFakePurgeEndpoint();
    other = await startFakePurgeEndpoint();
  });
  afterAll(async () => {
    for (const purger of purgers) purger.close();
    await endpoint.close();
    await other.close();
  });

  /** The caches whose acceptance of a purge each purger has seen (its observer's `sent`), in order. */
  const accepted = new Map<Purger, string[]>();

  const purger = (options: Partial<ConstructorParameters<typeof Purger>[0]> = {}) => {
    const sent: string[] = [];
    const { observer } = options;
    const made = new Purger({
      urls: [endpoint.url, other.url],
      send: (url, tags) => sendPurge(url, tags, 500),
      logger: silent,
      retryInitialMs: 20,
      retryMaxMs: 200,
      settleMs: 300,
      ...options,
      observer: {
        sent: (cache) => {
          sent.push(cache);
          observer?.sent(cache);
        },
        failed: (cache) => observer?.failed(cache),
        commitToPurge: (seconds) => observer?.commitToPurge(seconds),
      },
    });
    accepted.set(made, sent);
    purgers.push(made);
    return made;
  };

  /** Leads, and waits until both caches accepted the whole purge that starts a leadership. */
  const leadAndWait = async (made: Purger) => {
    const starts = [endpoint.requests.length, other.requests.length];
    const sent = accepted.get(made) ?? [];
    const sentBefore = sent.length;
    made.lead();
    for (const [index, cache] of [endpoint, other].entries()) {
      await cache.waitFor(
        (request) => cache.requests.indexOf(request) >= (starts[index] ?? 0) && request.xkey === ALL_TAG,
      );
    }
    // The purger has the answers too: nothing of it is under way any more.
    await eventually(
      () => [endpoint.url, other.url].every((url) => sent.slice(sentBefore).includes(url)),
      'both caches accepted the whole purge',
    );
  };

  it('purges nothing while it does not lead, everything when it starts leading, then each change on every cache', async () => {
    const sent: number[] = [];
    const measured: number[] = [];
    const made = purger({
      observer: { sent: () => sent.push(1), failed: () => {}, commitToPurge: (seconds) => measured.push(seconds) },
    });
    const start = endpoint.requests.length;
    made.changed({ kind: 'names', names: ['ignored@x'] });

    made.lead();
    await endpoint.waitFor((request) => request.xkey === ALL_TAG);
    await other.waitFor((request) => request.xkey === ALL_TAG);
    const committedAt = Date.now();
    made.changed({ kind: 'names', names: ['new@x'] }, committedAt);
    for (const cache of [endpoint, other]) {
      const purge = await cache.waitFor((request) => request.tags.includes('p:new%40x'));
      expect(purge.at - committedAt).toBeLessThan(PURGE_BOUND_MS);
      expect(purge.tags).toEqual(expect.arrayContaining(['ns:x', 'search', 'wallets']));
    }
    // The second purge of the same tags, after the settling time.
    await endpoint.waitFor((request) => request.tags.includes('p:new%40x') && request.at - committedAt >= 300);
    // The change heard before it led was never purged: its purge would have gone out before the
    // ones above, at once or when its own settling time ended (before the one of new@x).
    expect(endpoint.requests.slice(start).filter((request) => request.tags.includes('p:ignored%40x'))).toEqual([]);
    expect(measured.length).toBeGreaterThan(0);
    expect(sent.length).toBeGreaterThanOrEqual(4);
    made.close();
  });

  it('retries a failing cache with its tags until it accepts them, without holding the other back', async () => {
    const failures: string[] = [];
    const made = purger({
      observer: { sent: () => {}, failed: (cache) => failures.push(cache), commitToPurge: () => {} },
    });
    await leadAndWait(made);
    endpoint.answer = 503;
    const start = endpoint.requests.length;
    made.changed({ kind: 'names', names: ['retried@x'] });
    await other.waitFor((request) => request.tags.includes('p:retried%40x'));
    // Refused twice, and the tags kept for the next try (between tries, not while one is under way).
    await eventually(
      () => endpoint.requests.length - start >= 2 && (made.stats().pending[endpoint.url] ?? 0) > 0,
      'a second refused purge, its tags kept',
    );
    const switched = endpoint.requests.length;
    endpoint.answer = 200;
    const acceptedPurge = await endpoint.waitFor(
      (request) => endpoint.requests.indexOf(request) >= switched && request.tags.includes('p:retried%40x'),
      3000,
    );
    expect(acceptedPurge.tags).toContain('p:retried%40x');
    expect(failures).toContain(endpoint.url);
    made.close();
  });

  it('purges a cache whole when its backlog passes the bound, and when everything changed', async () => {
    const made = purger({ maxBacklog: 10 });
    await leadAndWait(made);
    endpoint.answer = 'hang';
    const hungFrom = endpoint.requests.length;
    made.changed({ kind: 'names', names: ['first@x'] });
    // Its purge has arrived, and hangs.
    await endpoint.waitFor(
      (request) => endpoint.requests.indexOf(request) >= hungFrom && request.tags.includes('p:first%40x'),
    );
    made.changed({ kind: 'names', names: Array.from({ length: 20 }, (_, index) => `n${index}@x`) });
    expect(made.stats().pending[endpoint.url]).toBe(1);
    endpoint.answer = 200;
    const start = endpoint.requests.length;
    // The hung purge fails at its deadline; the retry purges everything.
    await endpoint.waitFor((request) => endpoint.requests.indexOf(request) >= start && request.xkey === ALL_TAG, 3000);
    const after = endpoint.requests.length;
    made.changed({ kind: 'everything' });
    await endpoint.waitFor((request) => endpoint.requests.indexOf(request) >= after && request.xkey === ALL_TAG);
    made.close();
  });

  it('drops its backlog when another process leads', async () => {
    const made = purger();
    await leadAndWait(made);
    made.follow();
    const start = endpoint.requests.length;
    made.changed({ kind: 'names', names: ['follower@x'] });
    expect(made.stats()).toMatchObject({ leading: false });
    // Leading again, then a change: its second purge goes out after its settling time, so after
    // anything the change heard while following would have sent, at once or after the same
    // settling time.
    await leadAndWait(made);
    made.changed({ kind: 'names', names: ['marker@x'] });
    const marked = (from: number) =>
      endpoint.waitFor(
        (request) => endpoint.requests.indexOf(request) >= from && request.tags.includes('p:marker%40x'),
      );
    await marked(endpoint.requests.indexOf(await marked(start)) + 1);
    expect(endpoint.requests.slice(start).filter((request) => request.tags.includes('p:follower%40x'))).toEqual([]);
    made.close();
  });
});

describe.each(databaseKinds())('an App with CACHE_PURGE_URLS on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let endpoint: FakePurgeEndpoint;
  const long = 'x'.repeat(3000);

  beforeAll(async () => {
    endpoint = await startFakePurgeEndpoint();
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    await importLines(
      handle.db,
      ndjson(
        { kind: 'namespace', name: 'edge', ownerEmail: 'owner@edge.example' },
        { kind: 'profile', name: 'long@edge', creatorEmail: 'c@edge.example', description: long },
        {
          kind: 'profile',
          name: 'wallet@edge',
          creatorEmail: 'c@edge.example',
          records: { '1': { type: 'crypto', value: { eth: '0xAbC' } } },
        },
      ),
    );
    server = await startTestServer(handle, { CACHE_PURGE_URLS: endpoint.url, CACHE_MAX_AGE: '60' });
    await endpoint.waitFor((request) => request.xkey === ALL_TAG);
    // Answers are shareable once the change feed vouches for every change (PostgreSQL: its first heartbeat).
    await eventually(
      async () => (await fetch(`${server.url}/api/demo@me`)).headers.get('cache-control')?.includes('s-maxage'),
      { what: 'a shareable answer (the change feed live)', withinMs: 15_000 },
    );
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
    await endpoint?.close();
  });

  const get = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, init);
  const shared = 'public, max-age=60, s-maxage=86400';

  it('tags each shareable answer with what it shows', async () => {
    const cases: Array<[string, string[]]> = [
      ['/api/demo@me', ['all', 'p:demo%40me']],
      ['/api/nobody@me', ['all', 'p:nobody%40me']],
      ['/api/profiles?names=demo@me,nobody@me', ['all', 'p:demo%40me', 'p:nobody%40me']],
      ['/api/demo@me/vcard', ['all', 'p:demo%40me']],
      ['/api/long@edge/avatar', ['all', 'p:long%40edge']],
      ['/.well-known/webfinger?resource=acct:demo@me', ['all', 'p:demo%40me']],
      ['/api/search?prefix=de', ['all', 'search']],
      ['/api/search?prefix=de&namespace=me', ['all', 'ns:me']],
      ['/api/wallet/0xabc', ['all', 'wallets']],
      [`/graphql?query=${encodeURIComponent('{ profile(name: "demo@me") { name } }')}`, ['all', 'p:demo%40me']],
    ];
    for (const [path, tags] of cases) {
      const response = await get(path);
      await response.arrayBuffer();
      expect(response.headers.get('cache-control'), path).toBe(shared);
      expect(response.headers.get('xkey')?.split(' '), path).toEqual(tags);
      expect(response.headers.get('surrogate-key'), path).toBe(response.headers.get('xkey'));
    }
  });

  it('never tags or shares the owner check, POST answers or errors', async () => {
    const owner = await get('/api/owner-check?email=x@example.com&name=demo@me');
    expect(owner.headers.get('cache-control')).toBe('no-store');
    expect(owner.headers.get('xkey')).toBeNull();
    const post = await get('/api/profiles', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ names: ['demo@me'] }),
    });
    expect(post.headers.get('xkey')).toBeNull();
    const invalid = await get('/api/not-a-name');
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('xkey')).toBeNull();
    const graphqlOwner = await get(
      `/graphql?query=${encodeURIComponent('{ ownerCheck(email: "x@example.com", name: "demo@me") { hasCreated } }')}`,
    );
    expect(graphqlOwner.headers.get('cache-control')).toBe('no-store');
    expect(graphqlOwner.headers.get('xkey')).toBeNull();
  });

  it('purges the tags of an import on the cache within a second of its commit', async () => {
    const start = endpoint.requests.length;
    await importLines(handle.db, ndjson({ kind: 'profile', name: 'fresh@edge', creatorEmail: 'c@edge.example' }));
    const committed = Date.now();
    const purge = await endpoint.waitFor(
      (request) => endpoint.requests.indexOf(request) >= start && request.tags.includes('p:fresh%40edge'),
    );
    expect(purge.at - committed).toBeLessThan(PURGE_BOUND_MS);
    expect(purge.tags).toEqual(expect.arrayContaining(['ns:edge', 'search']));
    // That one was sent at once: the settling purge of the same tags comes after it.
    await endpoint.waitFor((request) => request.at > purge.at && request.tags.includes('p:fresh%40edge'));
    const metrics = await (await get('/metrics')).text();
    expect(metrics).toMatch(/^edge_purges_sent_total\{cache="[^"]+"\} [1-9]/m);
    expect(metrics).toMatch(/^edge_commit_to_purge_seconds_count [1-9]/m);
    expect(metrics).toMatch(/^edge_purge_leader 1$/m);
  });

  it('compresses large answers in each coding, with an ETag of its own and 304 per coding', async () => {
    const identity = await rawGet(`${server.url}/api/long@edge`);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toMatch(/Accept-Encoding/i);
    const etags = new Set<string>([String(identity.headers.etag)]);
    for (const coding of AVAILABLE_CODINGS as Coding[]) {
      const answer = await rawGet(`${server.url}/api/long@edge`, { 'accept-encoding': coding });
      expect(answer.headers['content-encoding']).toBe(coding);
      expect(answer.body.length).toBeLessThan(identity.body.length);
      expect(decode(answer.body, coding)).toBe(identity.body.toString('utf8'));
      const etag = String(answer.headers.etag);
      etags.add(etag);
      const again = await rawGet(`${server.url}/api/long@edge`, { 'accept-encoding': coding, 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.headers.etag).toBe(etag);
      const otherCoding = await rawGet(`${server.url}/api/long@edge`, { 'if-none-match': etag });
      expect(otherCoding.status).toBe(200);
    }
    expect(etags.size).toBe(AVAILABLE_CODINGS.length + 1);
  });

  it('compresses batches and GraphQL answers alike, and leaves small answers as they are', async () => {
    const batchPath = `/api/profiles?names=${['long@edge', 'demo@me', 'lab@studio'].join(',')}`;
    const batch = await rawGet(`${server.url}${batchPath}`);
    const batchBr = await rawGet(`${server.url}${batchPath}`, { 'accept-encoding': 'br' });
    expect(batchBr.headers['content-encoding']).toBe('br');
    expect(decode(batchBr.body, 'br')).toBe(batch.body.toString('utf8'));
    const query = `/graphql?query=${encodeURIComponent('{ profile(name: "long@edge") { name description } }')}`;
    const graphql = await rawGet(`${server.url}${query}`, { accept: 'application/json' });
    const graphqlGzip = await rawGet(`${server.url}${query}`, {
      accept: 'application/json',
      'accept-encoding': 'gzip',
    });
    expect(graphqlGzip.headers['content-encoding']).toBe('gzip');
    expect(decode(graphqlGzip.body, 'gzip')).toBe(graphql.body.toString('utf8'));
    expect(graphqlGzip.headers.etag).not.toBe(graphql.headers.etag);
    const small = await rawGet(`${server.url}/api/wallet@edge`, { 'accept-encoding': 'br' });
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers.vary).toMatch(/Accept-Encoding/i);
  });
});
