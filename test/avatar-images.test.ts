/**
 * Avatar images over a real socket, on every test database: `GET /api/{name_id}/avatar` answers
 * the profile's image itself, fetched from origin servers on 127.0.0.1 (let through by
 * AVATAR_PRIVATE_ORIGINS) and resized; nothing ever reaches the origin on 127.0.0.2. Originals
 * that cannot be used get the fallback, with a short cache lifetime, while lookups go on.
 *
 * No answer here depends on how busy the machine is: the bounds a test is not about are generous
 * (a fetch deadline of a minute, no bound on new variants a second), the test servers' origin
 * processes keep the service's priority (test/support/app-server.ts), and the tests of a bound
 * make it decide for sure (an origin that never answers, an origin process stopped, a clock the
 * test moves). Only the test of the idle priority itself needs the spare CPU it runs on.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AvatarImages,
  BUSY_LOG_INTERVAL_MS,
  FAILURE_MEMORY_MS,
  IMAGE_OUTCOMES,
  type ImageOutcome,
} from '../src/avatars/avatar-images.js';
import { RateGate } from '../src/avatars/concurrency.js';
import { originEnvironment } from '../src/avatars/origin-environment.js';
import { endsInARowAfter, restartPauseMs } from '../src/avatars/origin-process.js';
import { threadPriorities } from '../src/avatars/process-priority.js';
import { parseNetwork } from '../src/config/networks.js';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { createAddressPolicy } from '../src/outbound/address-policy.js';
import { initialsSvg } from '../src/profiles/avatar-svg.js';
import { formatFromAccept } from '../src/service/avatars.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import {
  claimingPng,
  holding,
  type ImageOrigin,
  type OriginHandler,
  pixelAt,
  redirect,
  serve,
  sidewaysJpeg,
  startImageOrigin,
  transparentPng,
} from './support/image-origin.js';
import { type CapturedLog, captureLog } from './support/log-capture.js';
import { readMetrics } from './support/metrics.js';
import { isStillRunning, processTree, type TreeProcess } from './support/process-tree.js';
import { collectOutput, PROJECT_ROOT } from './support/run-node.js';

const PUBLIC_URL = 'http://names.test';
const IMMUTABLE = 'public, max-age=31536000, immutable';
const PROFILE_CACHING = 'public, max-age=600';
/** A failed original's fallback: the failure memory (60 s), below the profile's 600 s. */
const FAILURE_CACHING = 'public, max-age=60';
const WEBP = { Accept: 'image/avif,image/webp,image/apng,image/*,*/*;q=0.8' };
const NO_WEBP = { Accept: 'image/png,image/*;q=0.8,*/*;q=0.5' };
const ENV = {
  PUBLIC_URL,
  AVATAR_PROXY: 'on',
  AVATAR_PRIVATE_ORIGINS: '127.0.0.1/32',
  // Bounds the tests are not about, out of reach of a loaded machine: the longest fetch allowed,
  // and no bound on new variants a second. The tests of these bounds set their own.
  AVATAR_FETCH_TIMEOUT_MS: '60000',
  AVATAR_RESIZES_PER_SECOND: '0',
  AVATAR_MAX_BYTES: String(2 * 1024 * 1024),
  CACHE_MAX_AGE: '600',
  PROFILE_LIMIT: '100000',
  PROFILE_CACHE_SIZE: '0',
};

/** The avatar origin processes (src/avatars/origin-process.ts) whose parent is `of`. */
const originProcesses = (of = process.pid) =>
  processTree(of).filter((entry) => entry.ppid === of && entry.command.includes('nps-avatar-origins'));
const originPids = () => originProcesses().map((entry) => entry.pid);

/** A handler that answers after `ms`, counting on the caller to have served the bytes. */
const slowly =
  (ms: number, body: Buffer, type = 'image/jpeg') =>
  (_req: IncomingMessage, res: ServerResponse) => {
    setTimeout(() => serve(body, type)(_req, res), ms);
  };

describe.each(databaseKinds())('avatar images on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let log: CapturedLog;
  let origin: ImageOrigin;
  let forbidden: ImageOrigin;
  let jpeg: Buffer;
  let png: Buffer;
  let profiles = 0;

  /** A new profile whose image is `url`; its name. */
  const profileWith = async (url: string): Promise<string> => {
    const name = `avatar-pic${++profiles}@me`;
    const line = { kind: 'profile', name, creatorEmail: 'x@example.com', image: url };
    expect((await importLines(handle.db, ndjson(line))).problems).toEqual([]);
    return name;
  };
  const avatar = (pathAndQuery: string, headers: Record<string, string> = {}, method = 'GET') =>
    fetch(`${server.url}/api/${pathAndQuery}`, { redirect: 'manual', headers, method });
  const body = async (response: Response) => Buffer.from(await response.arrayBuffer());
  const avatarUrlOf = async (name: string, size: number) => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ profile(name: ${JSON.stringify(name)}) { avatarUrl(size: ${size}) } }` }),
    });
    const { data } = (await response.json()) as { data: { profile: { avatarUrl: string } } };
    return data.profile.avatarUrl.slice(`${PUBLIC_URL}/api/`.length);
  };
  const expectInitials = async (response: Response, name: string, size: number) => {
    expect(response.status, name).toBe(200);
    expect(response.headers.get('content-type'), name).toBe('image/svg+xml');
    expect(await response.text(), name).toBe(initialsSvg(name, size));
  };

  beforeAll(async () => {
    [jpeg, png] = await Promise.all([sidewaysJpeg(), transparentPng()]);
    origin = await startImageOrigin('127.0.0.1');
    forbidden = await startImageOrigin('127.0.0.2');
    forbidden.route('/a.jpg', serve(jpeg));
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    // The demo data declares the namespace `me`; its own images are on hosts outside the machine, never asked for here.
    await seedDemoData(handle.db);
    log = captureLog('info');
    server = await startTestServer(handle, ENV, log.logger);
  });
  afterAll(async () => {
    // The origin outside AVATAR_PRIVATE_ORIGINS was never asked anything.
    expect(forbidden?.requests).toEqual([]);
    // Broken and hostile originals are information, never an error of the service.
    expect(log.lines.filter((line) => line.level >= 50)).toEqual([]);
    await server?.close();
    await handle?.close();
    await testDb?.drop();
    await origin?.close();
    await forbidden?.close();
  });

  it('answers a large JPEG as a 64×64 WebP or JPEG, turned by its EXIF orientation, without its metadata', async () => {
    origin.route('/big.jpg', serve(jpeg));
    const name = await profileWith(`${origin.url}/big.jpg`);
    for (const [headers, format, type] of [
      [WEBP, 'webp', 'image/webp'],
      [NO_WEBP, 'jpeg', 'image/jpeg'],
      [{}, 'jpeg', 'image/jpeg'],
    ] as const) {
      const response = await avatar(`${name}/avatar?size=64`, headers);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(type);
      expect(response.headers.get('vary')).toBe('Accept');
      expect(response.headers.get('cache-control')).toBe(PROFILE_CACHING);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const image = await body(response);
      const metadata = await sharp(image).metadata();
      expect(metadata).toMatchObject({ format, width: 64, height: 64 });
      expect(metadata.exif).toBeUndefined();
      expect(metadata.orientation).toBeUndefined();
      expect(metadata.icc).toBeUndefined();
      expect(image.includes('secret-exif')).toBe(false);
      // Stored sideways with red on the left; shown (orientation 6) with red on top.
      const [top, bottom] = await Promise.all([pixelAt(image, 32, 4), pixelAt(image, 32, 60)]);
      expect(top[0]).toBeGreaterThan(200);
      expect(top[2]).toBeLessThan(60);
      expect(bottom[2]).toBeGreaterThan(200);
      expect(bottom[0]).toBeLessThan(60);
    }
    // One original, three answers (two formats): fetched once.
    expect(origin.count('/big.jpg')).toBe(1);
  });

  it('keeps a transparent PNG a PNG with alpha when WebP is not accepted', async () => {
    origin.route('/clear.png', serve(png, 'image/png'));
    const name = await profileWith(`${origin.url}/clear.png`);
    const response = await avatar(`${name}/avatar?size=100`, NO_WEBP);
    expect(response.headers.get('content-type')).toBe('image/png');
    const image = await body(response);
    expect(await sharp(image).metadata()).toMatchObject({ format: 'png', width: 100, height: 100, hasAlpha: true });
    expect((await pixelAt(image, 2, 2))[3]).toBe(0);
    expect(await pixelAt(image, 50, 50)).toEqual([0, 255, 0, 255]);
    // WebP keeps the transparency too.
    const webp = await body(await avatar(`${name}/avatar?size=100`, WEBP));
    expect(await sharp(webp).metadata()).toMatchObject({ format: 'webp', hasAlpha: true });
  });

  it('answers the format that format= names, whatever Accept says; refuses other formats', async () => {
    origin.route('/f.jpg', serve(jpeg));
    const name = await profileWith(`${origin.url}/f.jpg`);
    for (const format of ['png', 'jpeg', 'webp'] as const) {
      const response = await avatar(`${name}/avatar?size=32&format=${format}`, format === 'webp' ? NO_WEBP : WEBP);
      expect(response.headers.get('content-type')).toBe(`image/${format}`);
      expect((await sharp(await body(response)).metadata()).format).toBe(format);
    }
    for (const format of ['gif', 'WEBP', '', 'png&format=png']) {
      const response = await avatar(`${name}/avatar?format=${format}`);
      expect(response.status, format).toBe(400);
      expect(await response.json()).toEqual({ error: 'Invalid format, expected webp, jpeg or png' });
    }
  });

  it('answers a variant again without the origin, with an ETag and 304; immutable under the current v=', async () => {
    origin.route('/again.jpg', serve(jpeg));
    const name = await profileWith(`${origin.url}/again.jpg`);
    const first = await avatar(`${name}/avatar?size=48`, WEBP);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const second = await avatar(`${name}/avatar?size=48`, WEBP);
    expect(second.headers.get('etag')).toBe(etag);
    expect((await body(second)).equals(await body(first))).toBe(true);
    const revalidated = await avatar(`${name}/avatar?size=48`, { ...WEBP, 'If-None-Match': etag ?? '' });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('vary')).toBe('Accept');
    expect(await revalidated.text()).toBe('');
    const head = await avatar(`${name}/avatar?size=48`, WEBP, 'HEAD');
    expect(head.headers.get('content-type')).toBe('image/webp');
    expect(await head.text()).toBe('');
    expect(origin.count('/again.jpg')).toBe(1);

    const versioned = await avatar(await avatarUrlOf(name, 48), WEBP);
    expect(versioned.headers.get('cache-control')).toBe(IMMUTABLE);
    expect(versioned.headers.get('etag')).toBe(etag);
    expect(origin.count('/again.jpg')).toBe(1);
  });

  it('gives an image a new version when AVATAR_PROXY is switched, so a redirect is not kept for good', async () => {
    origin.route('/switched.jpg', serve(jpeg));
    const name = await profileWith(`${origin.url}/switched.jpg`);
    const redirecting = await startTestServer(handle, { ...ENV, AVATAR_PROXY: 'off' });
    try {
      const resizedUrl = await avatarUrlOf(name, 48);
      const response = await fetch(`${redirecting.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ profile(name: ${JSON.stringify(name)}) { avatarUrl(size: 48) } }` }),
      });
      const { data } = (await response.json()) as { data: { profile: { avatarUrl: string } } };
      const redirectUrl = data.profile.avatarUrl.slice(`${PUBLIC_URL}/api/`.length);
      expect(redirectUrl).not.toBe(resizedUrl);

      const kept = await fetch(`${redirecting.url}/api/${redirectUrl}`, { redirect: 'manual' });
      expect(kept.status).toBe(302);
      expect(kept.headers.get('cache-control')).toBe(IMMUTABLE);
      // The proxy turned on: a client holding the redirect's URL gets the image, not for good.
      const image = await avatar(redirectUrl, WEBP);
      expect(image.headers.get('content-type')).toBe('image/webp');
      expect(image.headers.get('cache-control')).toBe(PROFILE_CACHING);
      // And turned off: the resized image's URL is answered with the redirect, not for good.
      const back = await fetch(`${redirecting.url}/api/${resizedUrl}`, { redirect: 'manual' });
      expect(back.status).toBe(302);
      expect(back.headers.get('cache-control')).toBe(PROFILE_CACHING);
    } finally {
      await redirecting.close();
    }
  });

  it('fetches and resizes once for 30 concurrent first requests of one variant', async () => {
    origin.route('/crowd.jpg', slowly(200, jpeg));
    const name = await profileWith(`${origin.url}/crowd.jpg`);
    const answers = await Promise.all(Array.from({ length: 30 }, () => avatar(`${name}/avatar?size=64`, WEBP)));
    const etags = new Set(answers.map((answer) => answer.headers.get('etag')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(200));
    expect(etags.size).toBe(1);
    expect(origin.count('/crowd.jpg')).toBe(1);
  });

  it('follows a redirect to an allowed image, and none to 127.0.0.2 or 169.254.169.254', async () => {
    origin.route('/moved.jpg', redirect('/final.jpg'));
    origin.route('/final.jpg', serve(jpeg));
    origin.route('/inside.jpg', redirect(`${forbidden.url}/a.jpg`));
    origin.route('/metadata.jpg', redirect('http://169.254.169.254/latest/meta-data/iam'));
    const moved = await profileWith(`${origin.url}/moved.jpg`);
    const response = await avatar(`${moved}/avatar?size=64`, NO_WEBP);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    for (const target of ['inside.jpg', 'metadata.jpg']) {
      const name = await profileWith(`${origin.url}/${target}`);
      await expectInitials(await avatar(`${name}/avatar?size=64`, WEBP), name, 64);
    }
  });

  it('refuses every spelling of a refused address, fetching nothing', async () => {
    const port = forbidden.port;
    for (const host of [
      '127.0.0.2',
      '0x7f000002',
      '2130706434',
      '0177.0.0.2',
      '127.2',
      '[::ffff:127.0.0.2]',
      'localhost',
      '169.254.169.254',
      '[::1]',
      '10.0.0.1',
      '0.0.0.0',
    ]) {
      const name = await profileWith(`http://${host}:${port}/a.jpg`);
      await expectInitials(await avatar(`${name}/avatar?size=40`), name, 40);
    }
  });

  it('rasterises an SVG original without running its script or loading its external image', async () => {
    origin.route('/tracker.png', serve(png, 'image/png'));
    const svg = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="120" height="120">
  <script>fetch('${origin.url}/tracker.png?script')</script>
  <rect width="120" height="120" fill="#ff0000"/>
  <image href="${origin.url}/tracker.png" width="60" height="60"/>
  <image xlink:href="${origin.url}/tracker.png?xlink" width="60" height="60"/>
  <image href="file:///etc/passwd" width="60" height="60"/>
</svg>`;
    origin.route('/logo.svg', serve(svg, 'image/svg+xml'));
    const name = await profileWith(`${origin.url}/logo.svg`);
    for (const headers of [WEBP, NO_WEBP]) {
      const response = await avatar(`${name}/avatar?size=64`, headers);
      expect(response.headers.get('content-type')).not.toBe('image/svg+xml');
      const image = await body(response);
      expect(image.includes('<svg')).toBe(false);
      expect(await sharp(image).metadata()).toMatchObject({ width: 64, height: 64 });
      // Red where the external image would have been drawn (its green square), and elsewhere.
      for (const [x, y] of [
        [16, 16],
        [48, 48],
      ] as const) {
        const [red, green, blue] = await pixelAt(image, x, y);
        expect([red > 240, green < 20, blue < 20]).toEqual([true, true, true]);
      }
    }
    expect(origin.requests.filter((requested) => requested.startsWith('/tracker.png'))).toEqual([]);
  });

  it('answers the fallback, briefly cached, for originals that cannot be used, and remembers them', async () => {
    const total = 30 * 1024 * 1024;
    const huge = { written: 0, closed: false };
    origin.route('/huge.jpg', (req, res) => {
      req.socket.once('close', () => {
        huge.closed = true;
      });
      res.writeHead(200, { 'Content-Type': 'image/jpeg' });
      const chunk = Buffer.alloc(64 * 1024, 0xff);
      const write = () => {
        while (huge.written < total && !req.socket.destroyed) {
          huge.written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', write);
            return;
          }
        }
      };
      write();
    });
    origin.route('/claims.png', serve(claimingPng(60_000, 60_000), 'image/png'));
    origin.route('/page.jpg', serve('<!doctype html><html><body>not an image</body></html>', 'image/jpeg'));
    for (const target of ['huge.jpg', 'claims.png', 'page.jpg']) {
      const name = await profileWith(`${origin.url}/${target}`);
      // Under the current v= too: never immutable.
      const response = await avatar(await avatarUrlOf(name, 64), WEBP);
      expect(response.headers.get('cache-control'), target).toBe(FAILURE_CACHING);
      await expectInitials(response, name, 64);
      // Remembered: the next request does not ask the origin again.
      await expectInitials(await avatar(`${name}/avatar?size=64`), name, 64);
      expect(origin.count(`/${target}`), target).toBe(1);
    }
    expect(huge.closed).toBe(true);
    expect(huge.written).toBeLessThan(total / 3);
  });

  it.skipIf(process.platform !== 'linux')(
    'answers the fallback when the variant is not made in time (its origin process stopped, as a starved core would leave it), briefly cached, and recovers',
    async () => {
      const clock = manualClock();
      const deadlineMs = 300;
      const before = originPids();
      const loaded = await startTestServer(
        handle,
        { ...ENV, AVATAR_FETCH_TIMEOUT_MS: String(deadlineMs) },
        log.logger,
        {
          avatarImages: { clock },
        },
      );
      // The origin never answers until released: the fetch's deadline decides, whenever the
      // origin process gets the CPU to notice it.
      const stalled = holding();
      origin.route('/stalled.jpg', stalled.handler);
      origin.route('/next.jpg', serve(jpeg));
      const name = await profileWith(`${origin.url}/stalled.jpg`);
      const other = await profileWith(`${origin.url}/next.jpg`);
      const get = (pathAndQuery: string) => fetch(`${loaded.url}/api/${pathAndQuery}`, { headers: WEBP });
      let stopped: number | undefined;
      try {
        const versioned = await avatarUrlOf(name, 64);
        let settled = false;
        const pending = get(versioned).finally(() => {
          settled = true;
        });
        await origin.requested('/stalled.jpg');
        const [originProcess] = originProcesses().filter((entry) => !before.includes(entry.pid));
        if (originProcess === undefined) throw new Error('no origin process under the test process');
        process.kill(originProcess.pid, 'SIGSTOP');
        stopped = originProcess.pid;
        // The origin process gets no CPU at all: lookups are answered, the avatar waits.
        expect((await get('empty@me')).status).toBe(200);
        expect(settled).toBe(false);
        process.kill(originProcess.pid, 'SIGCONT');
        stopped = undefined;
        const response = await pending;
        // The fallback, never immutable under the current v=, at most the failure memory.
        expect(response.headers.get('cache-control')).toBe(FAILURE_CACHING);
        await expectInitials(response, name, 64);
        const metrics = await readMetrics(loaded.url);
        expect(metrics.value('avatar_origin_fetches_total', { outcome: 'timeout' })).toBe(1);
        // Remembered for the failure memory: answered without asking the origin again.
        await expectInitials(await get(`${name}/avatar?size=64`), name, 64);
        expect(origin.count('/stalled.jpg')).toBe(1);
        // The same origin process goes on making variants.
        const next = await get(`${other}/avatar?size=64`);
        expect(next.headers.get('content-type')).toBe('image/webp');
        const now = originProcesses().filter((entry) => !before.includes(entry.pid));
        expect(now.map((entry) => entry.pid)).toEqual([originProcess.pid]);
        // The origin answers again; once the failure is forgotten, the image, for good under v=.
        stalled.release(serve(jpeg));
        await clock.advance(FAILURE_MEMORY_MS + 1);
        const recovered = await get(versioned);
        expect(recovered.headers.get('content-type')).toBe('image/webp');
        expect(recovered.headers.get('cache-control')).toBe(IMMUTABLE);
        expect(origin.count('/stalled.jpg')).toBe(2);
      } finally {
        if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
        stalled.release(serve(jpeg));
        await loaded.close();
      }
    },
  );

  it('answers fallback=404 and fallback URLs for a failing original, never cached for long', async () => {
    origin.route('/broken.jpg', (_req, res) => res.writeHead(500).end());
    const name = await profileWith(`${origin.url}/broken.jpg`);
    const missing = await avatar(`${name}/avatar?fallback=404`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'No avatar' });
    const redirected = await avatar(`${await avatarUrlOf(name, 64)}&fallback=https://cdn.example/x.png`);
    expect(redirected.status).toBe(302);
    expect(redirected.headers.get('location')).toBe('https://cdn.example/x.png');
    expect(redirected.headers.get('cache-control')).toBe(FAILURE_CACHING);
    expect(origin.count('/broken.jpg')).toBe(1);
  });

  it('counts fetches by outcome, bytes, durations and variant cache lookups in /metrics', async () => {
    const metrics = await readMetrics(server.url);
    expect(metrics.value('avatar_origin_fetches_total', { outcome: 'ok' })).toBeGreaterThan(0);
    expect(metrics.value('avatar_origin_bytes_total')).toBeGreaterThan(jpeg.length);
    expect(metrics.value('avatar_resize_duration_seconds_count')).toBeGreaterThan(0);
    expect(metrics.value('avatar_origin_fetch_duration_seconds_count', { outcome: 'ok' })).toBeGreaterThan(0);
    expect(metrics.value('avatar_variant_cache_lookups_total', { result: 'hit' })).toBeGreaterThan(0);
  });

  it.skipIf(process.platform !== 'linux')(
    'counts every origin fetch by what became of it: ok only for an original decoded and resized',
    async () => {
      const page = '<!doctype html><html><body>not an image</body></html>';
      const cut = jpeg.subarray(0, jpeg.length >> 1);
      const huge = claimingPng(50_000, 50_000);
      const causes: Array<[ImageOutcome, string, OriginHandler | undefined]> = [
        ['ok', '/outcome/photo.jpg', serve(jpeg)],
        ['refused-url', '/outcome/to-ftp.jpg', redirect('ftp://127.0.0.1/a.jpg')],
        ['refused-address', `${forbidden.url}/a.jpg`, undefined],
        ['too-large', '/outcome/large.jpg', serve(Buffer.alloc(2 * 1024 * 1024 + 1))],
        ['http-error', '/outcome/missing.jpg', (_req, res) => res.writeHead(404).end()],
        ['redirect-limit', '/outcome/loop.jpg', redirect('/outcome/loop.jpg')],
        ['network-error', '/outcome/hang-up.jpg', (req) => req.socket.destroy()],
        // An HTML page sent as a PNG, a header of 2.5 gigapixels, a JPEG cut off half-way.
        ['not-image', '/outcome/page.png', serve(page, 'image/png')],
        ['too-many-pixels', '/outcome/huge.png', serve(huge, 'image/png')],
        ['decode-error', '/outcome/cut.jpg', serve(cut)],
      ];
      // A server of its own, to count from zero; and its own log: one outcome is an error of the service.
      const before = originPids();
      const counting = await startTestServer(handle, ENV, captureLog('info').logger);
      const stalled = holding();
      origin.route('/outcome/stalled.jpg', stalled.handler);
      try {
        const get = (name: string) => fetch(`${counting.url}/api/${name}/avatar?size=32`, { headers: WEBP });
        for (const [outcome, target, handler] of causes) {
          if (handler !== undefined) origin.route(target, handler);
          const name = await profileWith(target.startsWith('/') ? `${origin.url}${target}` : target);
          const response = await get(name);
          if (outcome === 'ok') expect(response.headers.get('content-type'), outcome).toBe('image/webp');
          else await expectInitials(response, name, 32);
        }
        // The origin process ends while it fetches (the service's own failure, not the origin's).
        const name = await profileWith(`${origin.url}/outcome/stalled.jpg`);
        const pending = get(name);
        await origin.requested('/outcome/stalled.jpg');
        for (const entry of originProcesses().filter(({ pid }) => !before.includes(pid))) {
          process.kill(entry.pid, 'SIGKILL');
        }
        await expectInitials(await pending, name, 32);

        const metrics = await readMetrics(counting.url);
        const counted = Object.fromEntries(
          IMAGE_OUTCOMES.map((outcome) => [outcome, metrics.value('avatar_origin_fetches_total', { outcome })]),
        );
        // Each once; a timeout and busy come of their bounds, tested above with their own servers.
        const expected = Object.fromEntries(IMAGE_OUTCOMES.map((outcome) => [outcome, 1]));
        expect(counted).toEqual({ ...expected, timeout: 0, busy: 0 });
        for (const outcome of IMAGE_OUTCOMES) {
          const timed = metrics.value('avatar_origin_fetch_duration_seconds_count', { outcome });
          expect(timed ?? 0, outcome).toBe(counted[outcome]);
        }
        // Bytes of the bodies received whole, whatever became of them.
        const whole = [jpeg, Buffer.from(page), huge, cut].reduce((sum, body) => sum + body.length, 0);
        expect(metrics.value('avatar_origin_bytes_total')).toBe(whole);
        expect(metrics.value('avatar_resize_duration_seconds_count')).toBe(1);
      } finally {
        stalled.release(serve(jpeg));
        await counting.close();
      }
    },
  );

  it('keeps variants on disk under DATA_DIR: another process answers them without the origin', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nps-avatars-'));
    origin.route('/disk.jpg', serve(jpeg));
    const name = await profileWith(`${origin.url}/disk.jpg`);
    try {
      const env = { ...ENV, DATA_DIR: dataDir };
      const before = originPids();
      const one = await startTestServer(handle, env, log.logger);
      const first = await fetch(`${one.url}/api/${name}/avatar?size=80`, { headers: WEBP });
      const etag = first.headers.get('etag');
      // The variant was made by an origin process of that service, which ends when it closes.
      const ones = originProcesses().filter((entry) => !before.includes(entry.pid));
      if (process.platform === 'linux') expect(ones).toHaveLength(1); // read from /proc
      await one.close();
      expect(ones.filter(isStillRunning)).toEqual([]);
      const two = await startTestServer(handle, env, log.logger);
      const again = await fetch(`${two.url}/api/${name}/avatar?size=80`, { headers: WEBP });
      await two.close();
      expect(again.headers.get('etag')).toBe(etag);
      expect(origin.count('/disk.jpg')).toBe(1);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('answers new variants beyond AVATAR_RESIZES_PER_SECOND and its queue with the fallback, stored nowhere', async () => {
    const names: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      origin.route(`/rate-${i}.jpg`, serve(jpeg));
      names.push(await profileWith(`${origin.url}/rate-${i}.jpg`));
    }
    // The bound's clock moves only when the test moves it: no stall of the machine lets a request through.
    const clock = manualClock();
    const bounded = await startTestServer(handle, { ...ENV, AVATAR_RESIZES_PER_SECOND: '1' }, log.logger, {
      avatarImages: { clock },
    });
    try {
      const get = (name: string) => fetch(`${bounded.url}/api/${name}/avatar?size=32`, { headers: WEBP });
      const [first = '', ...others] = names;
      // A second's worth (one) starts at once.
      expect((await get(first)).headers.get('content-type')).toBe('image/webp');
      // Of the next two, one waits its turn (the queue holds a second's worth) and one is not made now.
      const racing = others.map((name, index) => get(name).then((answer) => ({ answer, index })));
      const refused = await Promise.race(racing);
      const busy = others[refused.index] ?? '';
      expect(refused.answer.status).toBe(200);
      expect(refused.answer.headers.get('cache-control')).toBe('no-store');
      expect(await refused.answer.text()).toBe(initialsSvg(busy, 32));
      // A second later the waiting one has its turn.
      await clock.advance(1000);
      const waited = await racing[1 - refused.index];
      expect(waited?.answer.headers.get('content-type')).toBe('image/webp');
      // Not remembered as a failure: asked again once the service has room, the image.
      await clock.advance(1000);
      expect((await get(busy)).headers.get('content-type')).toBe('image/webp');
      const metrics = await readMetrics(bounded.url);
      expect(metrics.value('avatar_origin_fetches_total', { outcome: 'busy' })).toBe(1);
    } finally {
      await bounded.close();
    }
  });
});

describe('origin fetches at once', () => {
  it('are at most 2 per host and 4 in all', async () => {
    const origin = await startImageOrigin('127.0.0.1');
    const jpeg = await sidewaysJpeg(200, 150);
    const open = new Map<string, number>();
    const most = new Map<string, number>();
    let openInAll = 0;
    let mostInAll = 0;
    const held = (req: IncomingMessage, res: ServerResponse) => {
      const host = (req.headers.host ?? '').split(':')[0] ?? '';
      open.set(host, (open.get(host) ?? 0) + 1);
      openInAll += 1;
      most.set(host, Math.max(most.get(host) ?? 0, open.get(host) ?? 0));
      mostInAll = Math.max(mostInAll, openInAll);
      setTimeout(() => {
        open.set(host, (open.get(host) ?? 0) - 1);
        openInAll -= 1;
        serve(jpeg)(req, res);
      }, 100);
    };
    const policy = createAddressPolicy([parseNetwork('127.0.0.1/32')].flatMap((network) => (network ? [network] : [])));
    const images = new AvatarImages({
      policy,
      timeoutMs: 60_000,
      maxBytes: 1024 * 1024,
      logger: captureLog().logger,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    try {
      const requests = [];
      for (const host of ['a.test', 'b.test', 'c.test']) {
        for (let i = 0; i < 5; i += 1) {
          origin.route(`/${host}/${i}.jpg`, held);
          const url = `http://${host}:${origin.port}/${host}/${i}.jpg`;
          requests.push(images.variant({ url, size: 16, format: 'jpeg' }));
        }
      }
      const results = await Promise.all(requests);
      expect(results.map((result) => result.kind)).toEqual(Array(15).fill('variant'));
      expect(Object.fromEntries(most)).toEqual({ 'a.test': 2, 'b.test': 2, 'c.test': 2 });
      expect(mostInAll).toBe(4);
    } finally {
      await images.close();
      await origin.close();
    }
  });
});

/** A clock the test moves: timers run when it passes their time. */
function manualClock() {
  // Not 0: lru-cache takes an entry stored at time 0 for one without a time (never stale).
  let now = 1_000_000;
  const timers: Array<{ at: number; run: () => void }> = [];
  return {
    now: () => now,
    setTimeout(run: () => void, ms: number) {
      timers.push({ at: now + ms, run });
    },
    /** Moves the clock by `ms`, running the timers that come due, in order, and what they resolve. */
    async advance(ms: number) {
      const until = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (next === undefined || next.at > until) break;
        timers.shift();
        now = next.at;
        next.run();
        await new Promise((resolve) => setImmediate(resolve));
      }
      now = until;
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe('new variants per second', () => {
  it('start at most a burst and then the rate, serve the queue in order, and refuse beyond it at once', async () => {
    const clock = manualClock();
    const gate = new RateGate(10, 10, 10, clock);
    const settled: Array<boolean | undefined> = Array(25).fill(undefined);
    const admitted = () => settled.filter((value) => value === true).length;
    const order: number[] = [];
    for (let i = 0; i < 25; i += 1) {
      void gate.admit().then((allowed) => {
        settled[i] = allowed;
        if (allowed) order.push(i);
      });
    }
    await clock.advance(0);
    // A burst of 10 at once; 10 wait; the 5 beyond the queue are refused without waiting.
    expect(admitted()).toBe(10);
    expect(settled.slice(20)).toEqual(Array(5).fill(false));
    expect(gate.waiters).toBe(10);
    // Then one a tenth of a second, never more than the rate allows.
    await clock.advance(99);
    expect(admitted()).toBe(10);
    await clock.advance(1);
    expect(admitted()).toBe(11);
    for (let step = 1; step <= 9; step += 1) {
      await clock.advance(100);
      expect(admitted()).toBe(11 + step);
    }
    expect(gate.waiters).toBe(0);
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // Idle for a while: the bucket holds a burst again, not more.
    await clock.advance(60_000);
    const later = await Promise.all(
      Array.from({ length: 12 }, () => Promise.race([gate.admit(), Promise.resolve('waiting')])),
    );
    expect(later.filter((value) => value === true)).toHaveLength(10);
    expect(later.filter((value) => value === 'waiting')).toHaveLength(2);
  });

  it('logs the variants not made for being busy at most every 10 s, with how many there were', async () => {
    const origin = await startImageOrigin('127.0.0.1');
    const jpeg = await sidewaysJpeg(200, 150);
    const clock = manualClock();
    const log = captureLog();
    const images = new AvatarImages({
      policy: createAddressPolicy([parseNetwork('127.0.0.1/32')].flatMap((network) => (network ? [network] : []))),
      timeoutMs: 60_000,
      maxBytes: 1024 * 1024,
      logger: log.logger,
      resizesPerSecond: 1,
      clock,
      idlePriority: false,
    });
    const busyLines = () => log.find('warn', 'the service is busy');
    try {
      for (let i = 0; i < 10; i += 1) origin.route(`/burst-${i}.jpg`, serve(jpeg));
      const ask = (i: number) => images.variant({ url: `${origin.url}/burst-${i}.jpg`, size: 16, format: 'webp' });
      // A burst of six: one starts, one waits its turn, four are not made now; one line for them.
      const burst = [0, 1, 2, 3, 4, 5].map(ask);
      expect(await Promise.all(burst.slice(2))).toEqual(Array(4).fill({ kind: 'failed', outcome: 'busy' }));
      expect(busyLines().map((line) => line.variants)).toEqual([1]);
      await clock.advance(BUSY_LOG_INTERVAL_MS);
      expect((await Promise.all(burst.slice(0, 2))).map((result) => result.kind)).toEqual(['variant', 'variant']);
      // Ten seconds on, the next burst's first busy variant is logged with the three not logged before.
      const next = [6, 7, 8, 9].map(ask);
      expect(await Promise.all(next.slice(2))).toEqual(Array(2).fill({ kind: 'failed', outcome: 'busy' }));
      expect(busyLines().map((line) => line.variants)).toEqual([1, 4]);
      await clock.advance(1000);
      expect((await Promise.all(next.slice(0, 2))).map((result) => result.kind)).toEqual(['variant', 'variant']);
    } finally {
      await images.close();
      await origin.close();
    }
  });

  it('answers a waiting request with its variant and one past the queue with busy, fetching nothing for it', async () => {
    const origin = await startImageOrigin('127.0.0.1');
    const jpeg = await sidewaysJpeg(200, 150);
    const clock = manualClock();
    const images = new AvatarImages({
      policy: createAddressPolicy([parseNetwork('127.0.0.1/32')].flatMap((network) => (network ? [network] : []))),
      timeoutMs: 60_000,
      maxBytes: 1024 * 1024,
      logger: captureLog().logger,
      resizesPerSecond: 1,
      clock,
      idlePriority: false,
    });
    try {
      for (const path of ['/first.jpg', '/second.jpg', '/third.jpg']) origin.route(path, serve(jpeg));
      const ask = (path: string) => images.variant({ url: `${origin.url}${path}`, size: 16, format: 'webp' });
      const first = ask('/first.jpg');
      const second = ask('/second.jpg');
      const third = ask('/third.jpg');
      // Refused at once: its turn would come after the queue's.
      expect(await third).toEqual({ kind: 'failed', outcome: 'busy' });
      expect((await first).kind).toBe('variant');
      let secondDone = false;
      void second.then(() => {
        secondDone = true;
      });
      await clock.advance(999);
      expect(secondDone).toBe(false);
      await clock.advance(1);
      expect((await second).kind).toBe('variant');
      expect(origin.requests).toEqual(['/first.jpg', '/second.jpg']);
      // Busy is not remembered: asked again with room, the variant.
      await clock.advance(1000);
      expect((await ask('/third.jpg')).kind).toBe('variant');
    } finally {
      await images.close();
      await origin.close();
    }
  });
});

describe('the format from Accept', () => {
  it.each([
    ['image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8', 'webp'],
    ['IMAGE/WEBP', 'webp'],
    ['image/png, image/webp;q=0.5', 'webp'],
    ['image/webp;q=0', 'png-or-jpeg'],
    ['image/webp;q=0.0, */*', 'png-or-jpeg'],
    ['image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5', 'png-or-jpeg'],
    ['*/*', 'png-or-jpeg'],
    ['', 'png-or-jpeg'],
    [undefined, 'png-or-jpeg'],
  ])('%s: %s', (accept, format) => {
    expect(formatFromAccept(accept)).toBe(format);
  });
});

describe('what the origin process is given of the service’s environment', () => {
  it('only where programs are, https trust, locale, time zone, temporary files and libvips’ settings', () => {
    const service = {
      PATH: '/usr/bin:/bin',
      NODE_EXTRA_CA_CERTS: '/etc/intranet-ca.pem',
      TZ: 'UTC',
      VIPS_WARNING: '0',
      DATABASE_URL: 'postgres://app:hunter2@db.internal/names',
      DATABASE_REPLICA_URLS: 'postgres://app:hunter2@replica.internal/names',
      REDIS_URL: 'redis://:hunter2@cache.internal:6379',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer hunter2',
      EDGE_PURGE_TOKEN: 'hunter2',
      NODE_OPTIONS: '--require ./apm-agent.js',
      path: '/tmp/evil', // another name on Linux, where names are case-sensitive
      VIPS: 'not a libvips setting',
    };
    expect(originEnvironment(service)).toEqual({
      PATH: '/usr/bin:/bin',
      NODE_EXTRA_CA_CERTS: '/etc/intranet-ca.pem',
      TZ: 'UTC',
      VIPS_WARNING: '0',
    });
  });
});

describe.skipIf(process.platform !== 'linux')('making variants at idle priority, in a process of its own', () => {
  /** `chrt` (util-linux) sets the idle class; without it the origin process stays at nice 19. */
  const canSetIdleClass = spawnSync('chrt', ['--version']).status === 0;
  const policy = createAddressPolicy([parseNetwork('127.0.0.1/32')].flatMap((network) => (network ? [network] : [])));
  /**
   * An idle-class process runs only on a core nothing else wants: on a machine busy on every core
   * this test waits for one (its fetch has the longest deadline there is; it asserts no time).
   */
  const IDLE_TEST_TIMEOUT_MS = 300_000;

  it(
    'makes new variants in the origin process, every thread of it at idle priority and without the service’s secrets; the service keeps its own',
    async () => {
      const secrets = {
        DATABASE_URL: 'postgres://app:hunter2@127.0.0.1/names',
        REDIS_URL: 'redis://:hunter2@127.0.0.1:6379',
      };
      const saved = Object.fromEntries(Object.keys(secrets).map((name) => [name, process.env[name]]));
      Object.assign(process.env, secrets);
      expect(originProcesses()).toEqual([]);
      const origin = await startImageOrigin('127.0.0.1');
      origin.route('/elsewhere.jpg', serve(await sidewaysJpeg(300, 200)));
      const images = new AvatarImages({
        policy,
        timeoutMs: IDLE_TEST_TIMEOUT_MS,
        maxBytes: 1024 * 1024,
        logger: captureLog().logger,
      });
      let originProcess: TreeProcess | undefined;
      try {
        const ask = (size: number) => images.variant({ url: `${origin.url}/elsewhere.jpg`, size, format: 'webp' });
        expect((await ask(48)).kind).toBe('variant');
        // Another size of the same image: its original is kept in the origin process, not fetched again.
        expect((await ask(24)).kind).toBe('variant');
        expect(origin.count('/elsewhere.jpg')).toBe(1);
        [originProcess] = originProcesses();
        if (originProcess === undefined) throw new Error('no origin process under the test process');
        // None of the service's secrets (set in this process before the origin process started).
        const environ = readFileSync(`/proc/${originProcess.pid}/environ`, 'utf8').split('\0').filter(Boolean);
        const names = environ.map((entry) => entry.slice(0, entry.indexOf('=')));
        expect(names).toContain('PATH');
        const given = originEnvironment(process.env);
        // Node's own for the IPC channel, and the service's environment only as originEnvironment passes it.
        expect(names.filter((name) => !(name in given) && !name.startsWith('NODE_CHANNEL_'))).toEqual([]);
        expect(names).not.toContain('DATABASE_URL');
        expect(environ.join('\n')).not.toContain('hunter2');
        const threads = threadPriorities(originProcess.pid);
        // Its event loop, V8's helpers, libuv's pool (sharp queues its work there) and libvips' workers.
        expect(threads.map((thread) => thread.name)).toEqual(
          expect.arrayContaining(['libuv-worker', 'libvips worker']),
        );
        expect(threads.filter((thread) => thread.nice !== 19)).toEqual([]);
        if (canSetIdleClass) expect(threads.filter((thread) => !thread.idleClass)).toEqual([]);
        // Not one thread of the service was lowered, its pool and V8's helpers included. (Their
        // number is not compared: libvips' threads of the test's own sharp come and go.)
        const own = threadPriorities(process.pid);
        expect(own.map((thread) => thread.name)).toEqual(expect.arrayContaining(['libuv-worker', 'V8Worker']));
        expect(own.filter((thread) => thread.idleClass || thread.nice === 19)).toEqual([]);
      } finally {
        for (const [name, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        }
        await images.close();
        await origin.close();
      }
      // Asked to stop at shutdown, it has ended when close is done.
      expect(originProcess !== undefined && isStillRunning(originProcess)).toBe(false);
    },
    IDLE_TEST_TIMEOUT_MS,
  );

  /**
   * The tests below are about the origin process's life, not its priority: it keeps the service's
   * (the bounds are not theirs to test either). `clock` decides the pause before a restart.
   */
  function imagesFor(logger: CapturedLog['logger'], clock?: ReturnType<typeof manualClock>) {
    return new AvatarImages({ policy, timeoutMs: 60_000, maxBytes: 1024 * 1024, logger, idlePriority: false, clock });
  }

  /**
   * Images whose origin never answers `/stalled.jpg` (until `release`) and answers `/after.jpg`,
   * with a variant of `/stalled.jpg` asked for and its fetch under way.
   */
  async function variantInFlight(clock?: ReturnType<typeof manualClock>) {
    const origin = await startImageOrigin('127.0.0.1');
    const jpeg = await sidewaysJpeg(300, 200);
    const stalled = holding();
    origin.route('/stalled.jpg', stalled.handler);
    origin.route('/after.jpg', serve(jpeg));
    const log = captureLog();
    const images = imagesFor(log.logger, clock);
    const inFlight = images.variant({ url: `${origin.url}/stalled.jpg`, size: 32, format: 'webp' });
    await origin.requested('/stalled.jpg');
    const after = () => images.variant({ url: `${origin.url}/after.jpg`, size: 32, format: 'webp' });
    const release = () => stalled.release(serve(jpeg));
    return { origin, log, images, inFlight, after, release };
  }

  it('fails the variants in flight when the origin process stops (the fallback, logged), and starts another for the next', async () => {
    const { origin, log, images, inFlight, after, release } = await variantInFlight();
    try {
      expect(origin.count('/stalled.jpg')).toBe(1);
      const closing = images.close();
      // What it was making fails at once; the process itself ends once it has finished that.
      expect(await inFlight).toEqual({ kind: 'failed', outcome: 'internal-error' });
      release();
      await closing;
      expect(originProcesses()).toEqual([]);
      expect(log.lines.some((line) => line.msg === 'avatar original not used; the fallback is answered')).toBe(true);
      expect((await after()).kind).toBe('variant');
    } finally {
      release();
      await images.close();
      await origin.close();
    }
  });

  it('an origin process killed while making a variant: that variant gets the fallback, the end is logged as an error, the next starts another', async () => {
    const { origin, log, images, inFlight, after, release } = await variantInFlight();
    try {
      const [killed] = originProcesses();
      if (killed === undefined) throw new Error('no origin process under the test process');
      process.kill(killed.pid, 'SIGKILL');
      expect(await inFlight).toEqual({ kind: 'failed', outcome: 'internal-error' });
      expect(log.find('error', 'the avatar origin process ended (signal SIGKILL)')).toHaveLength(1);
      expect((await after()).kind).toBe('variant');
      const [next] = originProcesses();
      expect(next?.pid).not.toBe(killed.pid);
    } finally {
      release();
      await images.close();
      await origin.close();
    }
  });

  it('an origin process that keeps ending soon after its start is started again only after a pause, and not for every variant meanwhile', async () => {
    const clock = manualClock();
    const { origin, log, images, inFlight, after, release } = await variantInFlight(clock);
    const stalled = holding();
    origin.route('/stalled-2.jpg', stalled.handler);
    origin.route('/stalled-3.jpg', stalled.handler);
    /** Asks for a variant of `path` and waits until the origin process is fetching it (the variant, boxed: not awaited). */
    const fetching = async (path: string) => {
      const variant = images.variant({ url: `${origin.url}${path}`, size: 32, format: 'webp' });
      await origin.requested(path);
      expect(origin.count(path)).toBe(1);
      return { variant };
    };
    const killOriginProcess = () => {
      const [running] = originProcesses();
      if (running === undefined) throw new Error('no origin process under the test process');
      process.kill(running.pid, 'SIGKILL');
    };
    try {
      killOriginProcess();
      expect(await inFlight).toEqual({ kind: 'failed', outcome: 'internal-error' });
      // One end: the next variant starts another at once.
      const { variant: second } = await fetching('/stalled-2.jpg');
      killOriginProcess();
      expect(await second).toEqual({ kind: 'failed', outcome: 'internal-error' });
      const ends = log.find('error', 'the avatar origin process ended (signal SIGKILL)');
      expect(ends).toHaveLength(2);
      expect(ends[1]?.msg).toContain('ended 2 times in a row, each within a minute of its start');
      expect(ends[1]?.msg).toContain('the fallback for 1 s');
      // Two in a row: for a second, new variants get the fallback at once, no process starts,
      // nothing is fetched, and nothing more is logged for them.
      const linesBefore = log.lines.length;
      const paused = await Promise.all(
        [32, 33, 34].map((size) => images.variant({ url: `${origin.url}/after.jpg`, size, format: 'webp' })),
      );
      expect(paused).toEqual(Array(3).fill({ kind: 'failed', outcome: 'busy' }));
      expect(originProcesses()).toEqual([]);
      expect(origin.count('/after.jpg')).toBe(0);
      expect(log.lines.slice(linesBefore)).toEqual([]);
      // After the pause another starts and makes variants; one more end soon after its start
      // continues the row (a good image between bad ones does not reset it): a 2 s pause.
      await clock.advance(999);
      expect(await after()).toEqual({ kind: 'failed', outcome: 'busy' });
      await clock.advance(1);
      expect((await after()).kind).toBe('variant');
      const { variant: third } = await fetching('/stalled-3.jpg');
      killOriginProcess();
      expect(await third).toEqual({ kind: 'failed', outcome: 'internal-error' });
      expect(log.find('error', 'the avatar origin process ended')[2]?.msg).toContain('the fallback for 2 s');
      const ask = (size: number) => images.variant({ url: `${origin.url}/after.jpg`, size, format: 'webp' });
      expect(await ask(64)).toEqual({ kind: 'failed', outcome: 'busy' });
      await clock.advance(2000);
      expect((await ask(64)).kind).toBe('variant');
    } finally {
      release();
      stalled.release(serve(await sidewaysJpeg(300, 200)));
      await images.close();
      await origin.close();
    }
  });

  it('pauses before another origin process after the second end in a row: 1 s, doubling, at most a minute; a process that lived a minute starts a new row', () => {
    expect([0, 1, 2, 3, 4, 8, 20].map(restartPauseMs)).toEqual([0, 0, 1000, 2000, 4000, 60_000, 60_000]);
    expect(endsInARowAfter(0, 10)).toBe(1);
    expect(endsInARowAfter(3, 59_999)).toBe(4);
    expect(endsInARowAfter(7, 60_000)).toBe(1);
  });

  it('the origin process ends with the service, also when the service is killed', { timeout: 120_000 }, async () => {
    const origin = await startImageOrigin('127.0.0.1');
    origin.route('/a.jpg', serve(await sidewaysJpeg(300, 200)));
    const script = `
      import { parseNetwork } from './src/config/networks.ts';
      import { createAddressPolicy } from './src/outbound/address-policy.ts';
      import { AvatarImages } from './src/avatars/avatar-images.ts';
      import pino from 'pino';
      const policy = createAddressPolicy([parseNetwork('127.0.0.1/32')]);
      const images = new AvatarImages({
        policy, timeoutMs: 60000, maxBytes: 1048576, logger: pino({ level: 'silent' }), idlePriority: false,
      });
      const result = await images.variant({ url: ${JSON.stringify(`${origin.url}/a.jpg`)}, size: 32, format: 'webp' });
      console.log(result.kind);
      setInterval(() => {}, 1000);
    `;
    const service = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = collectOutput(service);
    try {
      // Two Node processes start from the sources (tsx): on a loaded machine that takes a while.
      await eventually(() => output.stdout.includes('\n') || service.exitCode !== null, {
        what: 'the variant (or the service to end)',
        withinMs: 100_000,
      });
      expect(output.stdout).toBe('variant\n');
      const [child] = originProcesses(service.pid);
      if (child === undefined) throw new Error(`no origin process under the service: ${output.stderr}`);
      service.kill('SIGKILL');
      await eventually(() => !isStillRunning(child), { what: 'the origin process to end', withinMs: 15_000 });
    } finally {
      service.kill('SIGKILL');
      await origin.close();
    }
  });
});
