/**
 * The avatar part of `npm run bench` (scenario key `avatars`; `BENCH_ONLY=avatars` runs only
 * this part). On a small database of its own, with profiles whose images are 2000×1500 JPEGs on
 * a local origin (bench/static-server.ts in a process of its own, let through by
 * AVATAR_PRIVATE_ORIGINS), against one service process as `npm start` runs it:
 *
 * 1. a cached 64-pixel WebP variant under BENCH_CONNECTIONS, against the static server answering
 *    the same bytes (alternating rounds);
 * 2. first-time resizes: one request at a time, each for an image not fetched before (fetch,
 *    decode, resize, encode), p50 and p99;
 * 3. REST lookups (10 connections) alone, and while 4 more connections request new variants
 *    (alternating rounds): p99 of the lookups, and the resizes done meanwhile;
 * 4. the peak RSS of the service and of its origin process, which makes the new variants.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import postgres from 'postgres';
import sharp from 'sharp';
import { importLines } from '../src/data/importer.js';
import { openDatabase } from '../src/db/database.js';
import { processTree } from '../test/support/process-tree.js';
import { type ServerProcess, type SpawnedProcess, startServerProcess } from '../test/support/server-process.js';
import { benchServiceSettings, cycle } from './support.js';

const IMAGES = 2000;
const PLAIN = 2000;
const FIRST_RESIZES = Number(process.env.BENCH_AVATAR_RESIZES ?? 60);
const LOOKUP_CONNECTIONS = 10;
const RESIZE_CONNECTIONS = 4;
const WEBP = 'image/avif,image/webp,image/apng,image/*,*/*;q=0.8';

export interface AvatarsFigure {
  originalBytes: number;
  cached: LoadFigure;
  staticImage: LoadFigure;
  firstResizeMs: { count: number; p50: number; p99: number; max: number };
  lookupsAlone: LoadFigure;
  lookupsWithResizes: LoadFigure;
  /** Variants resized per second by the 4 resize connections, while the lookups ran. */
  resizesPerSecond: number;
  peakRssMb: number | undefined;
  /** The origin process's peak RSS (src/avatars/origin-process.ts), in MB. */
  originPeakRssMb: number | undefined;
  /**
   * The peak of the two processes' memory together, as proportional set sizes sampled every half
   * second: RSS counts the pages of the node binary and of shared libraries in each process,
   * though the two share them.
   */
  peakPssMb: number;
}

interface LoadFigure {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

type Starter = (env: Record<string, string>) => Promise<{ process: SpawnedProcess; url: string }>;

export interface AvatarBenchOptions {
  adminUrl: string;
  start: Starter;
  peakRssMb: (pid: number) => number | undefined;
  rounds: number;
  seconds: number;
  connections: number;
}

/** A 2000×1500 photo-like JPEG (smooth noise: it compresses like a photograph, not like a flat colour). */
function photo(): Promise<Buffer> {
  return sharp({
    create: {
      width: 2000,
      height: 1500,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .blur(1.5)
    .jpeg({ quality: 85 })
    .toBuffer();
}

/**
 * The origin of the originals: a process of its own, so that serving about 10 MB a second of
 * originals does not hold up the event loop of the load generator that times the lookups.
 */
async function startOrigin(body: Buffer): Promise<ServerProcess> {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'nps-bench-origin-'));
  const file = path.join(folder, 'original.jpg');
  writeFileSync(file, body);
  try {
    return await startServerProcess({
      env: { STATIC_BODY_FILE: file, STATIC_CONTENT_TYPE: 'image/jpeg' },
      script: 'bench/static-server.ts',
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const percentile = (sorted: number[], share: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? Number.NaN;

/**
 * One autocannon run. Latencies are read from its `response` events, not from its histogram: the
 * histogram keeps whole milliseconds, and lookups alone answer in 1-2 ms, so its p99 could only
 * say 1 or 2 (and a ratio of two of them 1, 1.5 or 2).
 */
async function load(
  url: string,
  paths: () => string,
  seconds: number,
  connections: number,
  headers: Record<string, string> = {},
): Promise<LoadFigure> {
  const latencies: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        headers,
        requests: [{ setupRequest: (request) => ({ ...request, path: paths() }) }],
      },
      (error, finished) => (error ? reject(error) : resolve(finished)),
    );
    instance.on('response', (_client, statusCode, _bytes, milliseconds) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(milliseconds);
    });
  });
  latencies.sort((a, b) => a - b);
  const exact = (share: number) => Math.round(percentile(latencies, share) * 100) / 100;
  return {
    requestsPerSecond: result.requests.average,
    p50: exact(0.5),
    p99: exact(0.99),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

function mean(figures: LoadFigure[]): LoadFigure {
  const of = (pick: (figure: LoadFigure) => number) =>
    Math.round((figures.reduce((sum, figure) => sum + pick(figure), 0) / Math.max(figures.length, 1)) * 100) / 100;
  return {
    requestsPerSecond: Math.round(of((f) => f.requestsPerSecond)),
    p50: of((f) => f.p50),
    p99: of((f) => f.p99),
    non2xx: figures.reduce((sum, f) => sum + f.non2xx, 0),
    errors: figures.reduce((sum, f) => sum + f.errors, 0),
  };
}

/** Every variant asked for once: image i at sizes 16, 17, … (a new resize each, while they last). */
function newVariants(from: number): () => string {
  let next = from;
  return () => {
    const index = next++;
    return `/api/pic-${index % IMAGES}@benchav/avatar?size=${16 + Math.floor(index / IMAGES)}`;
  };
}

export async function measureAvatars(options: AvatarBenchOptions): Promise<AvatarsFigure> {
  const target = new URL(options.adminUrl);
  target.pathname = '/nps_bench_avatars';
  const admin = postgres(options.adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe('drop database if exists nps_bench_avatars with (force)');
  await admin.unsafe('create database nps_bench_avatars');
  const original = await photo();
  const origin = await startOrigin(original);
  const handle = await openDatabase({ url: target.toString(), dataDir: '' });
  const started: SpawnedProcess[] = [];
  try {
    await handle.migrate();
    const lines = [
      JSON.stringify({ kind: 'namespace', name: 'benchav', ownerEmail: 'o@example.org' }),
      ...Array.from({ length: IMAGES }, (_, i) =>
        JSON.stringify({
          kind: 'profile',
          name: `pic-${i}@benchav`,
          creatorEmail: 'x@example.org',
          image: `${origin.url}/img/${i}.jpg`,
        }),
      ),
      ...Array.from({ length: PLAIN }, (_, i) =>
        JSON.stringify({
          kind: 'profile',
          name: `plain-${i}@benchav`,
          creatorEmail: 'x@example.org',
          description: `plain ${i}`,
        }),
      ),
    ];
    const report = await importLines(handle.db, lines);
    if (!report.ok) throw new Error(`bench avatars: the import failed: ${JSON.stringify(report.problems.slice(0, 3))}`);
    const service = await options.start({
      DATABASE_URL: target.toString(),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PROFILE_LIMIT: '0',
      AVATAR_PRIVATE_ORIGINS: '127.0.0.1/32',
      ...benchServiceSettings(),
    });
    started.push(service.process);
    const memory = sampleMemory(service.process.pid);
    const cachedPath = '/api/pic-0@benchav/avatar?size=64';
    const variant = Buffer.from(
      await (await fetch(`${service.url}${cachedPath}`, { headers: { Accept: WEBP } })).arrayBuffer(),
    );
    const staticServer = await startServerProcess({
      env: { STATIC_BODY_BASE64: variant.toString('base64'), STATIC_CONTENT_TYPE: 'image/webp' },
      script: 'bench/static-server.ts',
    });
    started.push(staticServer);

    // 2. First-time resizes, one at a time (images 1 … FIRST_RESIZES, never asked for before).
    const times: number[] = [];
    for (let i = 1; i <= FIRST_RESIZES; i += 1) {
      const begun = performance.now();
      const response = await fetch(`${service.url}/api/pic-${i}@benchav/avatar?size=64`, { headers: { Accept: WEBP } });
      await response.arrayBuffer();
      if (response.headers.get('content-type') !== 'image/webp')
        throw new Error(`bench avatars: image ${i} was not resized`);
      times.push(performance.now() - begun);
    }
    const sorted = [...times].sort((a, b) => a - b);
    const round1 = (value: number) => Math.round(value * 10) / 10;
    const firstResizeMs = {
      count: times.length,
      p50: round1(percentile(sorted, 0.5)),
      p99: round1(percentile(sorted, 0.99)),
      max: round1(sorted.at(-1) ?? Number.NaN),
    };
    console.log(`avatars: first-time resizes ${JSON.stringify(firstResizeMs)}`);

    // 1. and 3., in alternating rounds.
    const plain = cycle(Array.from({ length: PLAIN }, (_, i) => `/api/plain-${i}@benchav`));
    const fresh = newVariants(IMAGES);
    const figures = {
      cached: [] as LoadFigure[],
      staticImage: [] as LoadFigure[],
      alone: [] as LoadFigure[],
      with: [] as LoadFigure[],
    };
    let resizesPerSecond = 0;
    const accept = { Accept: WEBP };
    await load(service.url, () => cachedPath, 2, options.connections, accept);
    await load(staticServer.url, () => '/', 2, options.connections, accept);
    for (let round = 1; round <= options.rounds; round += 1) {
      figures.cached.push(await load(service.url, () => cachedPath, options.seconds, options.connections, accept));
      figures.staticImage.push(await load(staticServer.url, () => '/', options.seconds, options.connections, accept));
      figures.alone.push(await load(service.url, plain, options.seconds, LOOKUP_CONNECTIONS));
      const [lookups, resizes] = await Promise.all([
        load(service.url, plain, options.seconds, LOOKUP_CONNECTIONS),
        load(service.url, fresh, options.seconds, RESIZE_CONNECTIONS, accept),
      ]);
      figures.with.push(lookups);
      resizesPerSecond += resizes.requestsPerSecond / options.rounds;
      console.log(
        `avatars round ${round}: cached ${Math.round(figures.cached.at(-1)?.requestsPerSecond ?? 0)}, static ${Math.round(figures.staticImage.at(-1)?.requestsPerSecond ?? 0)}, ` +
          `lookups p99 alone ${figures.alone.at(-1)?.p99} ms, with resizes ${lookups.p99} ms (${Math.round(resizes.requestsPerSecond)} resizes/s)`,
      );
    }
    return {
      originalBytes: original.length,
      cached: mean(figures.cached),
      staticImage: mean(figures.staticImage),
      firstResizeMs,
      lookupsAlone: mean(figures.alone),
      lookupsWithResizes: mean(figures.with),
      resizesPerSecond: Math.round(resizesPerSecond * 10) / 10,
      peakRssMb: options.peakRssMb(service.process.pid),
      originPeakRssMb: withDefined(originProcessOf(service.process.pid), options.peakRssMb),
      peakPssMb: memory.stop(),
    };
  } finally {
    await Promise.all(started.map((process) => process.stop()));
    await handle.close();
    await origin.stop();
    await admin.unsafe('drop database if exists nps_bench_avatars with (force)');
    await admin.end();
  }
}

/** The service's origin process (a child named `nps-avatar-origins`), if it runs. */
function originProcessOf(service: number): number | undefined {
  return processTree(service).find((entry) => entry.ppid === service && entry.command.includes('nps-avatar-origins'))
    ?.pid;
}

const withDefined = <T, R>(value: T | undefined, use: (value: T) => R): R | undefined =>
  value === undefined ? undefined : use(value);

/** Proportional set size of `pid` in kB (0 when it is gone). */
function pssKb(pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Samples the service's and its origin process's PSS together every half second; `stop` gives the peak in MB. */
function sampleMemory(service: number): { stop(): number } {
  let peakKb = 0;
  const sample = () => {
    const origin = originProcessOf(service);
    peakKb = Math.max(peakKb, pssKb(service) + (origin === undefined ? 0 : pssKb(origin)));
  };
  const timer = setInterval(sample, 500);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      sample();
      return Math.round(peakKb / 1024);
    },
  };
}

/** Targets of the avatar part. */
export function avatarTargets(
  figure: AvatarsFigure | undefined,
): Array<{ label: string; value: string; target: string; met: boolean }> {
  if (figure === undefined) return [];
  const cachedRatio = Math.round((figure.cached.requestsPerSecond / figure.staticImage.requestsPerSecond) * 100) / 100;
  const lookupRatio = Math.round((figure.lookupsWithResizes.p99 / Math.max(figure.lookupsAlone.p99, 0.01)) * 100) / 100;
  return [
    {
      label: 'avatar: cached 64-px variant / static image',
      value: `${cachedRatio}×`,
      target: '≥ 0.6×',
      met: cachedRatio >= 0.6,
    },
    {
      label: 'avatar: first-time resize of a 2000×1500 JPEG, p99',
      value: `${figure.firstResizeMs.p99} ms`,
      target: '≤ 150 ms',
      met: figure.firstResizeMs.p99 <= 150,
    },
    {
      label: 'avatar: lookup p99 with 4 resizing connections / alone',
      value: `${lookupRatio}×`,
      target: '≤ 1.5×',
      met: lookupRatio <= 1.5,
    },
    {
      label: 'avatar: memory of the service and its origin process together (peak PSS)',
      value: `${figure.peakPssMb} MB`,
      target: '≤ 200 MB',
      met: figure.peakPssMb <= 200,
    },
  ];
}

/** The report's section. */
export function avatarsSection(figure: AvatarsFigure | undefined): string[] {
  if (figure === undefined) return [];
  const row = (label: string, f: LoadFigure) =>
    `| ${label} | ${f.requestsPerSecond} | ${f.p50} | ${f.p99} | ${f.non2xx} | ${f.errors} |`;
  return [
    `## Avatars: 2000×1500 JPEG originals (${Math.round(figure.originalBytes / 1024)} KB) from a local origin`,
    '',
    '| load | req/s | p50 ms | p99 ms | non-2xx | errors |',
    '|---|---|---|---|---|---|',
    row('cached 64-px WebP variant', figure.cached),
    row('static server, the same bytes', figure.staticImage),
    row(`REST lookups alone, ${LOOKUP_CONNECTIONS} connections`, figure.lookupsAlone),
    row(`REST lookups while ${RESIZE_CONNECTIONS} connections request new variants`, figure.lookupsWithResizes),
    '',
    `First-time resizes, one at a time (${figure.firstResizeMs.count}): p50 ${figure.firstResizeMs.p50} ms, ` +
      `p99 ${figure.firstResizeMs.p99} ms, max ${figure.firstResizeMs.max} ms. New variants resized beside the lookups: ` +
      `${figure.resizesPerSecond}/s. Peak RSS: the service ${figure.peakRssMb ?? '?'} MB, its origin process ${figure.originPeakRssMb ?? '?'} MB; ` +
      `together, counting the pages they share once (PSS, sampled every 0.5 s): ${figure.peakPssMb} MB.`,
    '',
    '| figure | value | target | met |',
    '|---|---|---|---|',
    ...avatarTargets(figure).map((t) => `| ${t.label} | ${t.value} | ${t.target} | ${t.met ? 'yes' : '**no**'} |`),
    '',
  ];
}
