/**
 * System tier (needs Debian's varnish and varnish-modules): the service behind a real Varnish
 * running the shipped VCL (deploy/varnish/default.vcl), purged by the service's purger. A second
 * read is a hit; after an import, the next read within a second shows the change, for every kind
 * of answer; answers are cached again afterwards; a Varnish restarted after missing an import's
 * purge serves current data; compressed answers pass through intact; without CACHE_PURGE_URLS
 * shared caches are not told to keep answers longer than browsers.
 */
import { request as httpRequest } from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { createKey } from './support/api-keys.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { readMetrics } from './support/metrics.js';
import { freePort } from './support/throwaway-redis.js';
import { startVarnish, type Varnish, varnishd } from './support/varnish.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
}

/** A GET as sent and received (no decoding of the body), so codings and Varnish headers show. */
function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Varnish's X-Varnish holds two ids on a hit (this request's and the cached object's), one on a miss. */
const isHit = (answer: Answer) => String(answer.headers['x-varnish'] ?? '').split(' ').length === 2;

const NAMESPACE = { kind: 'namespace', name: 'edge', ownerEmail: 'owner@edge.example' };
const profile = (name: string, description: string) => ({
  kind: 'profile',
  name,
  creatorEmail: 'maker@edge.example',
  description,
});

describe('the service behind Varnish (deploy/varnish/default.vcl)', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let varnish: Varnish;
  let varnishPort: number;
  let backendPort: number;

  beforeAll(async () => {
    varnishd(); // fails here, naming the packages, when Varnish or the xkey vmod is missing
    varnishPort = await freePort();
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await seedDemoData(handle.db);
    await importLines(
      handle.db,
      ndjson(
        NAMESPACE,
        profile('changed@edge', 'Before'),
        profile('gone@edge', 'Soon removed'),
        profile('long@edge', 'x'.repeat(3000)),
      ),
    );
    server = await startTestServer(handle, {
      CACHE_PURGE_URLS: `http://127.0.0.1:${varnishPort}`,
      CACHE_MAX_AGE: '60',
    });
    backendPort = Number(new URL(server.url).port);
    varnish = await startVarnish(backendPort, varnishPort);
    await startupPurgesDone();
  }, 60_000);
  afterAll(async () => {
    await varnish?.stop();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  const through = (path: string, headers: Record<string, string> = {}) => get(`${varnish.url}${path}`, headers);

  /**
   * The service purges Varnish whole when it starts leading (src/edge/purge-queues.ts), retrying until
   * Varnish, started after it, accepts: a purge landing between a test's two reads would empty
   * the cache under it (seen in CI). Waits until the service leads, has had a purge accepted and
   * has nothing left to purge, the same at two checks in a row 200 ms apart.
   */
  async function startupPurgesDone(): Promise<void> {
    let last = '';
    const settledTwice = async () => {
      const metrics = await readMetrics(server.url);
      const leading = metrics.total('edge_purge_leader');
      const sent = metrics.total('edge_purges_sent_total');
      const pending = metrics.total('edge_purge_pending_tags');
      const now = `${leading}/${sent}/${pending}`;
      const settled = leading === 1 && sent >= 1 && pending === 0 && now === last;
      last = now;
      if (!settled) throw new Error(`leading/sent/pending: ${now}`);
      return true;
    };
    await eventually(settledTwice, { what: "the service's start-up purges settled", withinMs: 20_000, everyMs: 200 });
  }

  /** Purges the service's purger had accepted by Varnish so far. */
  const purgesSent = async () => (await readMetrics(server.url)).total('edge_purges_sent_total');

  /** Reads `path` through Varnish until it is a hit (it was cached). */
  async function cached(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    const hit = async () => {
      const answer = await through(path, headers);
      return isHit(answer) && answer;
    };
    return eventually(hit, { what: `${path} cached`, withinMs: 5000, everyMs: 20 });
  }

  it('keeps X-Varnish and Age, and answers the second read from its cache', async () => {
    const first = await through('/api/demo@me');
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toBe('public, max-age=60, s-maxage=86400');
    const second = await through('/api/demo@me');
    expect(isHit(second)).toBe(true);
    expect(second.headers.age).toBeDefined();
    expect(second.text).toBe(first.text);
    // Another client's budget is not shown on a cached answer, and the tags stay inside.
    expect(second.headers['ratelimit-remaining']).toBeUndefined();
    expect(second.headers.xkey).toBeUndefined();
  });

  it('refuses purges from outside its ACL and purges without tags', async () => {
    await cached('/api/lab@studio');
    const purge = (localAddress: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${varnish.url}/`, { method: 'PURGE', localAddress, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    // 127.0.0.2 is loopback too, but not in the shipped ACL (127.0.0.1 and ::1).
    expect(await purge('127.0.0.2', { xkey: 'all' })).toBe(403);
    expect(await purge('127.0.0.1', {})).toBe(400);
    expect(isHit(await through('/api/lab@studio'))).toBe(true);
    expect(await purge('127.0.0.1', { xkey: 'p:lab%40studio' })).toBe(200);
    expect(isHit(await through('/api/lab@studio'))).toBe(false);
  });

  it('never caches the owner check', async () => {
    const path = '/api/owner-check?email=x@example.com&name=demo@me';
    await through(path);
    const again = await through(path);
    expect(isHit(again)).toBe(false);
    expect(again.headers['cache-control']).toBe('no-store');
  });

  it('shows an import within a second for every kind of answer, then caches the new answers', async () => {
    const graphqlPath = `/graphql?query=${encodeURIComponent('{ profile(name: "changed@edge") { description } }')}`;
    const reads: Array<{ path: string; headers?: Record<string, string>; changed: (answer: Answer) => boolean }> = [
      { path: '/api/changed@edge', changed: (answer) => answer.text.includes('"After"') },
      {
        path: '/api/profiles?names=demo@me,changed@edge',
        changed: (answer) => answer.text.includes('"After"'),
      },
      {
        path: graphqlPath,
        headers: { accept: 'application/json' },
        changed: (answer) => answer.text.includes('"After"'),
      },
      {
        path: '/.well-known/webfinger?resource=acct:newbie@edge',
        changed: (answer) => answer.status === 200,
      },
      { path: '/api/search?prefix=newb', changed: (answer) => answer.text.includes('newbie@edge') },
      { path: '/api/search?prefix=newb&namespace=edge', changed: (answer) => answer.text.includes('newbie@edge') },
      { path: '/api/newbie@edge', changed: (answer) => answer.status === 200 },
      { path: '/api/gone@edge', changed: (answer) => answer.status === 404 },
    ];
    for (const read of reads) {
      const before = await cached(read.path, read.headers);
      expect(read.changed(before), `${read.path} before the import`).toBe(false);
    }

    const sentBefore = await purgesSent();
    await importLines(
      handle.db,
      ndjson(profile('changed@edge', 'After'), profile('newbie@edge', 'New'), { kind: 'remove', name: 'gone@edge' }),
    );
    const committed = performance.now();

    for (const read of reads) {
      // Within a second of the commit, for all of them together.
      await eventually(async () => read.changed(await through(read.path, read.headers)), {
        what: `${read.path} showing the import within a second`,
        withinMs: Math.max(0, committed + 1000 - performance.now()),
        everyMs: 25,
      });
    }
    // Cached again once purged (a second read of each is a hit with the new answer). The second
    // purge of the same tags (SETTLE_MS later) drops them once more: wait until Varnish has
    // accepted both purges of the import.
    await eventually(async () => (await purgesSent()) >= sentBefore + 2, 'both purges of the import accepted');
    for (const read of reads) {
      const again = await cached(read.path, read.headers);
      expect(read.changed(again), `${read.path} cached with the change`).toBe(true);
    }
  });

  it('serves current data after Varnish missed an import while it was stopped', async () => {
    const path = '/api/changed@edge';
    await cached(path);
    const failedBefore = (await readMetrics(server.url)).total('edge_purges_failed_total');
    await varnish.stop();
    await importLines(handle.db, ndjson(profile('changed@edge', 'While Varnish was down')));
    // The purger fails, and will retry.
    await eventually(
      async () => (await readMetrics(server.url)).total('edge_purges_failed_total') > failedBefore,
      'a purge failed while Varnish was down',
    );
    const sentBefore = await purgesSent();
    varnish = await startVarnish(backendPort, varnishPort);
    const answer = await through(path);
    expect(answer.text).toContain('While Varnish was down');
    // The purger's retry reaches the new Varnish; answers are cached again.
    await eventually(async () => (await purgesSent()) > sentBefore, "the purger's retry accepted by the new Varnish");
    const again = await cached(path);
    expect(again.text).toContain('While Varnish was down');
    expect((await readMetrics(server.url)).value('edge_purges_failed_total')).toBeGreaterThan(0);
  });

  it('passes compressed answers through, each coding decoding to the identity body', async () => {
    const path = '/api/long@edge';
    const identity = await through(path);
    expect(identity.headers['content-encoding']).toBeUndefined();
    for (const coding of ['br', 'gzip'] as const) {
      const first = await through(path, { 'accept-encoding': coding });
      const again = await cached(path, { 'accept-encoding': coding });
      for (const answer of [first, again]) {
        expect(answer.headers['content-encoding']).toBe(coding);
        const decoded = coding === 'br' ? zlib.brotliDecompressSync(answer.body) : zlib.gunzipSync(answer.body);
        expect(decoded.toString('utf8')).toBe(identity.text);
      }
    }
  });
});

describe('Varnish in front of a service without CACHE_PURGE_URLS', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let varnish: Varnish;

  beforeAll(async () => {
    varnishd();
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await seedDemoData(handle.db);
    server = await startTestServer(handle, { CACHE_MAX_AGE: '60' });
    varnish = await startVarnish(Number(new URL(server.url).port));
  }, 60_000);
  afterAll(async () => {
    await varnish?.stop();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('tells shared caches no longer than browsers, and tags nothing', async () => {
    for (const path of [
      '/api/demo@me',
      '/api/profiles?names=demo@me',
      '/.well-known/webfinger?resource=acct:demo@me',
    ]) {
      const answer = await get(`${server.url}${path}`);
      const control = String(answer.headers['cache-control']);
      const shared = /s-maxage=(\d+)/.exec(control);
      const browser = /max-age=(\d+)/.exec(control);
      expect(shared === null || Number(shared[1]) <= Number(browser?.[1]), path).toBe(true);
      expect(answer.headers.xkey, path).toBeUndefined();
      const cachedAnswer = await get(`${varnish.url}${path}`);
      expect(String(cachedAnswer.headers['cache-control'])).not.toMatch(/s-maxage/);
    }
    // A 404 carries no caching headers, so Varnish does not keep it.
    await get(`${varnish.url}/api/nobody@me`);
    const missing = await get(`${varnish.url}/api/nobody@me`);
    expect(missing.status).toBe(404);
    expect(isHit(missing)).toBe(false);
  });
});

/**
 * The shipped VCL without what it knows of API keys: requests with a key are looked up like any
 * other, and a cached answer keeps its RateLimit headers. An operator's cache may well be so.
 */
function withoutKeyRules(vcl: string): string {
  const edited = vcl
    .replace(/\n\s*if \(req\.http\.Authorization \|\| req\.http\.X-Api-Key\) \{\n\s*return \(pass\);\n\s*\}/, '')
    .replace(/\n\s*if \(obj\.hits > 0\) \{[^}]*\}/, '');
  expect(edited.match(/X-Api-Key|obj\.hits/g), 'the key rules of deploy/varnish/default.vcl were not found').toBeNull();
  return edited;
}

describe('a shared cache that knows nothing of API keys, in front of the service', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let varnish: Varnish;

  beforeAll(async () => {
    varnishd();
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await seedDemoData(handle.db);
    server = await startTestServer(handle, { CACHE_MAX_AGE: '60' });
    varnish = await startVarnish(Number(new URL(server.url).port), undefined, withoutKeyRules);
  }, 60_000);
  afterAll(async () => {
    await varnish?.stop();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it("keeps no answer to a request with a key, so nobody is shown the key's budget", async () => {
    const { key } = await createKey(handle, { profileLimit: 777 });
    const keyless = await get(`${server.url}/api/demo@me`);
    expect(keyless.headers['ratelimit-limit']).not.toBe('777');
    for (const path of [
      '/api/demo@me',
      '/api/nobody@me',
      '/api/profiles?names=demo@me',
      '/api/demo@me/vcard',
      '/.well-known/webfinger?resource=acct:demo@me',
      '/api/search?prefix=de',
    ]) {
      const first = await get(`${varnish.url}${path}`, { 'x-api-key': key });
      const second = await get(`${varnish.url}${path}`, { 'x-api-key': key });
      const other = await get(`${varnish.url}${path}`);
      for (const answer of [first, second]) {
        expect([path, isHit(answer), answer.headers['ratelimit-limit']]).toEqual([path, false, '777']);
      }
      expect([path, other.headers['ratelimit-limit']]).not.toEqual([path, '777']);
    }
  });
});
