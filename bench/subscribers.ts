/**
 * The live-updates part of `npm run bench` (scenario key `subscribers`): BENCH_SUBSCRIBERS
 * (default 5,000) idle SSE subscribers of one name held open on one service process (REST
 * `/api/{name_id}/events`, from one client address, so LIVE_SUBSCRIPTIONS_PER_CLIENT is raised),
 * with the service's memory per subscriber, then BENCH_SUBSCRIBER_ROUNDS imports of a change
 * of that name and the time from each import's commit (when `importLines` returns) to every
 * subscriber's event: p50, p99 and the last one. It runs on a small database of its own, so the
 * benchmark's dataset stays as it is; load generator, service and PostgreSQL share the machine.
 */
import http from 'node:http';
import postgres from 'postgres';
import { importLines } from '../src/data/importer.js';
import { openDatabase } from '../src/db/database.js';
import type { SpawnedProcess } from '../test/support/server-process.js';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 5000);
const ROUNDS = Number(process.env.BENCH_SUBSCRIBER_ROUNDS ?? 5);
const NAME = 'watched@benchlive';
const line = (description: string) =>
  JSON.stringify({ kind: 'profile', name: NAME, creatorEmail: 'watched@example.org', description });

export interface SubscribersFigure {
  subscribers: number;
  /** Service RSS growth per open subscriber. */
  kilobytesPerSubscriber: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  /** Per round: ms from the import's commit to the p50, p99 and last subscriber's event. */
  rounds: Array<{ p50: number; p99: number; last: number }>;
}

type Starter = (env: Record<string, string>) => Promise<{ process: SpawnedProcess; url: string }>;

/** One subscriber: counts `event: profile` blocks and remembers when each arrived. */
function subscribe(url: string, arrivals: number[][], index: number): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}/api/${NAME}/events`, { agent: false }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`subscriber ${index}: HTTP ${response.statusCode}`));
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const at = Date.now();
        for (const _ of chunk.matchAll(/^event: profile$/gm)) arrivals[index]?.push(at);
      });
      resolve(request);
    });
    request.on('error', reject);
  });
}

const percentile = (sorted: number[], share: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? Number.NaN;

async function untilTrue(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`bench subscribers: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function measureSubscribers(
  adminUrl: string,
  start: Starter,
  rssMb: (pid: number) => number | undefined,
): Promise<SubscribersFigure> {
  const target = new URL(adminUrl);
  target.pathname = '/nps_bench_live';
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe('drop database if exists nps_bench_live with (force)');
  await admin.unsafe('create database nps_bench_live');
  const handle = await openDatabase({ url: target.toString(), dataDir: '' });
  const requests: http.ClientRequest[] = [];
  let service: SpawnedProcess | undefined;
  try {
    await handle.migrate();
    const namespace = JSON.stringify({ kind: 'namespace', name: 'benchlive', ownerEmail: 'o@example.org' });
    await importLines(handle.db, [namespace, line('round 0')]);
    const started = await start({
      DATABASE_URL: target.toString(),
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      PROFILE_LIMIT: '0',
      LIVE_SUBSCRIPTIONS_PER_CLIENT: String(SUBSCRIBERS),
      LIVE_SUBSCRIPTIONS_MAX: String(Math.max(SUBSCRIBERS, 10_000)),
    });
    service = started.process;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const rssBeforeMb = rssMb(service.pid) ?? Number.NaN;
    const arrivals: number[][] = Array.from({ length: SUBSCRIBERS }, () => []);
    // In steps, so the listen backlog is never what is measured.
    for (let first = 0; first < SUBSCRIBERS; first += 250) {
      const step = Array.from({ length: Math.min(250, SUBSCRIBERS - first) }, (_, offset) =>
        subscribe(started.url, arrivals, first + offset),
      );
      requests.push(...(await Promise.all(step)));
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const rssAfterMb = rssMb(service.pid) ?? Number.NaN;
    const rounds: SubscribersFigure['rounds'] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const report = await importLines(handle.db, [line(`round ${round}`)]);
      const committedAt = Date.now();
      if (!report.ok) throw new Error('bench subscribers: the import failed');
      await untilTrue(() => arrivals.every((times) => times.length >= round), 60_000, `round ${round}'s events`);
      const latencies = arrivals.map((times) => (times[round - 1] ?? Number.NaN) - committedAt).sort((a, b) => a - b);
      rounds.push({
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        last: latencies.at(-1) ?? Number.NaN,
      });
      console.log(`subscribers round ${round}: ${JSON.stringify(rounds.at(-1))}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return {
      subscribers: SUBSCRIBERS,
      kilobytesPerSubscriber: Math.round(((rssAfterMb - rssBeforeMb) * 1024 * 10) / SUBSCRIBERS) / 10,
      rssBeforeMb,
      rssAfterMb,
      rounds,
    };
  } finally {
    for (const request of requests) request.destroy();
    await service?.stop();
    await handle.close();
    await admin.unsafe('drop database if exists nps_bench_live with (force)');
    await admin.end();
  }
}

/** The report's section. */
export function subscribersSection(figure: SubscribersFigure | undefined): string[] {
  if (figure === undefined) return [];
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return [
    `## Live updates: ${figure.subscribers.toLocaleString('en-US')} idle SSE subscribers of one name`,
    '',
    `Service RSS ${figure.rssBeforeMb} MB → ${figure.rssAfterMb} MB: ${figure.kilobytesPerSubscriber} KB per subscriber.`,
    '',
    '| import commit → event | p50 ms | p99 ms | last (all subscribers) ms |',
    '|---|---|---|---|',
    ...figure.rounds.map((r, index) => `| round ${index + 1} | ${r.p50} | ${r.p99} | ${r.last} |`),
    `| median of rounds | ${median(figure.rounds.map((r) => r.p50))} | ${median(figure.rounds.map((r) => r.p99))} | ${median(figure.rounds.map((r) => r.last))} |`,
    '',
  ];
}
