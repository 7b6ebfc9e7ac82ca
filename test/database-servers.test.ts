/**
 * Several database servers (docs/scaling.md): reads on a streaming replica, the freshness rule
 * when the replica falls behind an import, a replica that goes away and comes back, the service
 * behind a transaction-mode PgBouncer, and start-ups that leave no lock behind. Real servers of
 * the test's own (test/support/postgres-cluster.ts): a primary, a hot standby and a PgBouncer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { importLines } from '../src/data/importer.js';
import { type DatabaseHandle, openDatabase } from '../src/db/database.js';
import { MIGRATION_LOCK_ID, MigrationLockTimeoutError } from '../src/db/migrations.js';
import { listen, type RunningServer } from '../src/http/server.js';
import { ndjson } from './support/data-files.js';
import { eventually } from './support/eventually.js';
import { captureLog } from './support/log-capture.js';
import { readMetrics } from './support/metrics.js';
import {
  activity,
  advisoryLocks,
  clusterToolsMissing,
  type PgBouncer,
  type Primary,
  postgresCluster,
  type Standby,
  sqlOn,
} from './support/postgres-cluster.js';
import { spawnServerProcess } from './support/server-process.js';

const MISSING = clusterToolsMissing();

const NAMESPACE = { kind: 'namespace', name: 'rep', ownerEmail: 'owner@rep.example' };
const profile = (local: string, description: string) => ({
  kind: 'profile',
  name: `${local}@rep`,
  creatorEmail: `${local}@maker.example`,
  description,
  records: { '1': { type: 'crypto', value: { eth: `0x${local.padEnd(40, '0').slice(0, 40)}` } } },
});
const NAMES = ['alpha', 'bravo', 'charlie', 'delta'];

interface Service {
  app: App;
  url: string;
  close(): Promise<void>;
}

/** How long `condition` took to hold, for the tests whose bound is the service's promise (checked every 25 ms). */
async function msUntil(what: string, condition: () => Promise<boolean> | boolean, withinMs: number): Promise<number> {
  const started = performance.now();
  await eventually(condition, { what, withinMs, everyMs: 25 });
  return performance.now() - started;
}

describe.skipIf(MISSING !== undefined)(
  `several database servers: a primary, a streaming replica, PgBouncer (skipped without PostgreSQL 15 binaries and pgbouncer${MISSING === undefined ? '' : `: ${MISSING}`})`,
  () => {
    const cluster = postgresCluster();
    let primary: Primary;
    let standby: Standby;
    let bouncer: PgBouncer;
    let writer: DatabaseHandle;
    const services: Service[] = [];

    async function serve(env: Record<string, string>, logger = captureLog('warn').logger): Promise<Service> {
      const config = loadConfig({ NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', PROFILE_LIMIT: '0', ...env });
      const app = await createApp(config, logger);
      const running: RunningServer = await listen(app, 0, '127.0.0.1');
      const service = { app, url: running.url, close: () => running.close() };
      services.push(service);
      return service;
    }

    async function stop(service: Service): Promise<void> {
      services.splice(services.indexOf(service), 1);
      await service.close();
    }

    const description = async (service: Service, local: string) => {
      const response = await fetch(`${service.url}/api/${local}@rep`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { description: string }).description;
    };

    /** Imports on the primary and waits until the standby has it, unless `replayed` is false. */
    async function change(local: string, text: string, db = writer.db): Promise<void> {
      const report = await importLines(db, ndjson(profile(local, text)));
      expect(report.ok).toBe(true);
    }

    beforeAll(async () => {
      primary = await cluster.startPrimary({ settings: { log_statement: 'all' } });
      standby = await cluster.startStandby(primary);
      bouncer = await cluster.startPgBouncer(primary, { poolMode: 'transaction' });
      writer = await openDatabase({ url: primary.url, dataDir: '' });
      await writer.migrate();
      const report = await importLines(
        writer.db,
        ndjson(NAMESPACE, ...NAMES.map((local) => profile(local, `${local} as imported`))),
      );
      expect(report.ok).toBe(true);
      await standby.waitForReplay();
    }, 60_000);

    afterAll(async () => {
      for (const service of [...services]) await service.close();
      await writer?.close();
      await cluster.close();
    }, 60_000);

    it('reads lookups, batches, search, reverse lookups and name checks from the replica; owner checks from the primary', async () => {
      const service = await serve({
        DATABASE_URL: primary.url,
        DATABASE_REPLICA_URLS: standby.url,
        // Every lookup reaches a server: the cache would answer repeats itself.
        PROFILE_CACHE_SIZE: '0',
      });
      const primaryLogFrom = primary.log().length;
      const standbyLogFrom = standby.log().length;
      expect(await description(service, 'alpha')).toBe('alpha as imported');
      expect((await fetch(`${service.url}/api/profiles?names=bravo@rep,charlie@rep`)).status).toBe(200);
      expect((await fetch(`${service.url}/api/search?prefix=del`)).status).toBe(200);
      expect((await fetch(`${service.url}/api/wallet/0x${'alpha'.padEnd(40, '0')}`)).status).toBe(200);
      const graphql = await fetch(`${service.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: '{ profile(name: "delta@rep") { name } nameCheck(name: "alpha@rep") { exists } }',
        }),
      });
      expect(await graphql.json()).toEqual({ data: { profile: { name: 'delta@rep' }, nameCheck: { exists: true } } });
      const owner = await fetch(`${service.url}/api/owner-check?email=alpha@maker.example&name=alpha@rep`);
      expect(await owner.json()).toMatchObject({ hasCreated: true });

      const onStandby = standby.log().slice(standbyLogFrom);
      const onPrimary = primary.log().slice(primaryLogFrom);
      expect(onStandby).toMatch(/from "profiles"/);
      expect(onStandby).toMatch(/wallet_addresses/);
      // The primary saw the owner check, and no lookup, batch, search or reverse lookup.
      expect(onPrimary).toMatch(/lower\("profiles"\."creator_email"\)/);
      expect(onPrimary).not.toMatch(/"profiles"\."records_json"|"recordsJson"|"records"\."key"/);
      expect(onPrimary).not.toMatch(/wallet_addresses/);
      expect((await activity(standby)).some((session) => session.applicationName === 'name-profile-service')).toBe(
        true,
      );
      const [status] = service.app.database.replicas?.() ?? [];
      expect(status).toMatchObject({ inUse: true, reason: 'in use' });
      expect(status?.reads).toBeGreaterThanOrEqual(5);

      const ready = (await (await fetch(`${service.url}/readyz`)).json()) as { replicas: unknown[] };
      expect(ready.replicas).toEqual([
        {
          replica: expect.stringContaining(`:${standby.port}/nps`),
          inUse: true,
          reason: 'in use',
          lagMs: expect.any(Number),
        },
      ]);
      const metrics = await readMetrics(service.url);
      expect(metrics.value('database_replica_in_use', { reason: 'in use' })).toBe(1);
      expect(metrics.value('database_replica_reads_total')).toBeGreaterThan(0);
      expect(metrics.value('database_replica_lag_seconds')).toBeGreaterThanOrEqual(0);
      await stop(service);
    });

    it('never answers older than an import it heard of, while the replica replays nothing; back on the replica after', async () => {
      const service = await serve({ DATABASE_URL: primary.url, DATABASE_REPLICA_URLS: standby.url });
      await eventually(() => service.app.cache.stats().answering, {
        what: 'the profile cache answering',
        withinMs: 5000,
      });
      expect(await description(service, 'bravo')).toBe('bravo as imported');
      expect(await description(service, 'bravo')).toBe('bravo as imported'); // cached now
      await standby.pauseReplay();
      const readsBefore = service.app.database.replicas?.()[0]?.reads ?? 0;

      const seen: string[] = [];
      const changedAt = Date.now();
      await change('bravo', 'bravo changed while the replica slept');
      let firstNewAt: number | undefined;
      // "Never older" has no event that ends it: lookups go on for a fixed window, long enough
      // for the change to be heard and for heartbeats after it, while the replica stays paused.
      while (Date.now() - changedAt < 2500) {
        const text = await description(service, 'bravo');
        seen.push(text);
        if (text !== 'bravo as imported') firstNewAt ??= Date.now();
      }
      expect(firstNewAt).toBeDefined();
      expect((firstNewAt ?? Infinity) - changedAt).toBeLessThan(1000);
      const firstNew = seen.findIndex((text) => text !== 'bravo as imported');
      expect(seen.slice(firstNew).every((text) => text === 'bravo changed while the replica slept')).toBe(true);
      // The paused replica is out of use for changed data; the cache holds what the primary said.
      const [paused] = service.app.database.replicas?.() ?? [];
      expect(paused?.reason).toBe('replaying a change');
      expect(service.app.cache.stats().entries).toBeGreaterThan(0);

      await standby.resumeReplay();
      await eventually(() => service.app.database.replicas?.()[0]?.inUse === true, {
        what: 'the replica in use again',
        withinMs: 5000,
      });
      await fetch(`${service.url}/api/charlie@rep`);
      expect(service.app.database.replicas?.()[0]?.reads ?? 0).toBeGreaterThan(readsBefore);
      expect(await description(service, 'bravo')).toBe('bravo changed while the replica slept');
      await stop(service);
    }, 30_000);

    it('answers without a 5xx while the replica stops under load, and uses it again once it is back', async () => {
      const service = await serve({
        DATABASE_URL: primary.url,
        DATABASE_REPLICA_URLS: standby.url,
        PROFILE_CACHE_SIZE: '0',
      });
      const statuses = new Map<number, number>();
      let answered = 0;
      let running = true;
      const load = Array.from({ length: 8 }, async (_, worker) => {
        for (let i = 0; running; i += 1) {
          const response = await fetch(`${service.url}/api/${NAMES[(worker + i) % NAMES.length]}@rep`);
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          answered += 1;
        }
      });
      /** Until the load has had `count` more answers. */
      const answersMore = (count: number, what: string) => {
        const from = answered;
        return eventually(() => answered >= from + count, { what, withinMs: 10_000 });
      };
      const replicaReads = () => service.app.database.replicas?.()[0]?.reads ?? 0;
      // Under way, and on the replica.
      await answersMore(16, 'the load answered');
      await eventually(() => replicaReads() > 0, 'reads on the replica');
      const stoppedAt = performance.now();
      await standby.stop();
      const outOfUseAfter = await msUntil(
        'the replica out of use',
        () => service.app.database.replicas?.()[0]?.inUse === false,
        1000,
      );
      expect(performance.now() - stoppedAt).toBeLessThan(2000);
      // Lookups keep being answered while the replica is down (by the primary).
      await answersMore(16, 'answers while the replica is down');
      await standby.start();
      const backAfter = await msUntil(
        'the replica in use again',
        () => service.app.database.replicas?.()[0]?.inUse === true,
        10_000,
      );
      const readsBack = replicaReads();
      await eventually(() => replicaReads() > readsBack, 'the load read from the replica again');
      running = false;
      await Promise.all(load);
      expect([...statuses.keys()]).toEqual([200]);
      expect(replicaReads()).toBeGreaterThan(readsBack);
      expect(outOfUseAfter).toBeLessThan(1000);
      expect(backAfter).toBeLessThan(10_000);
      await standby.waitForReplay();
      await stop(service);
    }, 40_000);

    it('works through a transaction-mode PgBouncer with DATABASE_LISTEN_URL: every surface, an import through it, the live cache', async () => {
      const service = await serve({
        DATABASE_URL: bouncer.url,
        DATABASE_POOL_MODE: 'transaction',
        DATABASE_LISTEN_URL: primary.url,
      });
      await eventually(() => service.app.cache.stats().answering, {
        what: 'the profile cache answering',
        withinMs: 5000,
      });
      expect(await description(service, 'charlie')).toBe('charlie as imported');
      const owner = await fetch(`${service.url}/api/owner-check?email=owner@rep.example&name=charlie@rep`);
      expect(await owner.json()).toMatchObject({ hasCreated: true });
      const graphql = await fetch(`${service.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query:
            '{ profiles(names: ["alpha@rep", "delta@rep"]) { name } searchProfiles(prefix: "ch") { edges { node { name } } } }',
        }),
      });
      expect(await graphql.json()).toEqual({
        data: {
          profiles: [{ name: 'alpha@rep' }, { name: 'delta@rep' }],
          searchProfiles: { edges: [{ node: { name: 'charlie@rep' } }] },
        },
      });
      for (let i = 0; i < 200; i += 1) expect((await fetch(`${service.url}/api/${NAMES[i % 4]}@rep`)).status).toBe(200);

      // An import through PgBouncer, and the cached profile follows it within a second.
      const throughPooler = await openDatabase({ url: bouncer.url, dataDir: '', poolMode: 'transaction' });
      try {
        await change('charlie', 'charlie changed through the pooler', throughPooler.db);
      } finally {
        await throughPooler.close();
      }
      const took = await msUntil(
        'the change visible',
        async () => (await description(service, 'charlie')) === 'charlie changed through the pooler',
        1500,
      );
      expect(took).toBeLessThan(1000);
      // The LISTEN is a direct session on the primary, not a pooled one.
      expect(
        (await activity(primary)).some((session) => session.applicationName === 'name-profile-service listen'),
      ).toBe(true);
      await stop(service);
    }, 30_000);

    it('keeps the change log through a transaction-mode PgBouncer with a replica: two importers at once, every change once in the feed and in a resumed stream', async () => {
      const service = await serve({
        DATABASE_URL: bouncer.url,
        DATABASE_POOL_MODE: 'transaction',
        DATABASE_LISTEN_URL: primary.url,
        DATABASE_REPLICA_URLS: standby.url,
      });
      const feed = async (after: string) => {
        const changes: Array<{ cursor: string; name: string; kind: string }> = [];
        for (let cursor = after; ; ) {
          const response = await fetch(`${service.url}/api/changes?after=${cursor}&limit=7`);
          expect(response.status).toBe(200);
          const page = (await response.json()) as { changes: typeof changes; next: string; hasMore: boolean };
          changes.push(...page.changes);
          cursor = page.next;
          if (!page.hasMore) return changes;
        }
      };
      const start = ((await (await fetch(`${service.url}/api/changes?after=now`)).json()) as { next: string }).next;
      const importers = await Promise.all(
        [0, 1].map(() => openDatabase({ url: bouncer.url, dataDir: '', poolMode: 'transaction' })),
      );
      try {
        await Promise.all(
          importers.map(async (importer, index) => {
            for (let round = 0; round < 10; round += 1) {
              await change(
                NAMES[(index * 2 + round) % 4] ?? 'alpha',
                `round ${round} of importer ${index}`,
                importer.db,
              );
            }
          }),
        );
      } finally {
        await Promise.all(importers.map((importer) => importer.close()));
      }
      const changes = await feed(start);
      expect(changes.map((entry) => entry.kind)).toEqual(Array(20).fill('updated'));
      expect(new Set(changes.map((entry) => entry.cursor)).size).toBe(20);
      // A stream resumed at the start gets each name's current state once, in the order of their latest changes.
      const latest = [...new Map(changes.map((entry) => [entry.name, entry.cursor])).entries()].sort(
        (a, b) =>
          changes.findIndex((entry) => entry.cursor === a[1]) - changes.findIndex((entry) => entry.cursor === b[1]),
      );
      const stream = await fetch(
        `${service.url}/api/changes/events?names=${NAMES.map((local) => `${local}@rep`).join(',')}`,
        {
          headers: { 'Last-Event-ID': start },
        },
      );
      const reader = stream.body?.getReader();
      let text = '';
      while (reader !== undefined && (text.match(/^id: /gm)?.length ?? 0) < latest.length) {
        const { value } = await reader.read();
        text += new TextDecoder().decode(value);
      }
      await reader?.cancel();
      expect([...text.matchAll(/^id: (.+)$/gm)].map((match) => match[1])).toEqual(latest.map(([, cursor]) => cursor));
      await stop(service);
    }, 60_000);

    it('refuses DATABASE_POOL_MODE=transaction without DATABASE_LISTEN_URL with one line naming it', async () => {
      const process = spawnServerProcess({
        env: { DATABASE_URL: bouncer.url, DATABASE_POOL_MODE: 'transaction', PORT: '0' },
      });
      const exit = await process.exited;
      expect(exit.code).toBe(2);
      const lines = process.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/DATABASE_LISTEN_URL is required with DATABASE_POOL_MODE=transaction/);
    });

    it('leaves no lock behind through PgBouncer: the next start, pooled or direct, does not wait', async () => {
      const pooled = { DATABASE_URL: bouncer.url, DATABASE_POOL_MODE: 'transaction', DATABASE_LISTEN_URL: primary.url };
      await stop(await serve(pooled));
      expect((await advisoryLocks(primary)).filter((lock) => lock.key === BigInt(MIGRATION_LOCK_ID))).toEqual([]);
      for (const env of [pooled, { DATABASE_URL: primary.url }]) {
        const started = Date.now();
        await stop(await serve(env));
        expect(Date.now() - started).toBeLessThan(5000);
      }
      expect((await advisoryLocks(primary)).filter((lock) => lock.key === BigInt(MIGRATION_LOCK_ID))).toEqual([]);
    }, 30_000);

    it('says at warn which session holds the migration lock, and gives up after its bound with one line', async () => {
      const holder = await sqlOn(primary, `select pg_backend_pid() as pid`);
      expect(holder).toHaveLength(1);
      const blocker = (await import('postgres')).default(primary.url, { max: 1, onnotice: () => {} });
      await blocker`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
      const log = captureLog('warn');
      const database = await openDatabase({
        url: primary.url,
        dataDir: '',
        log: log.logger,
        migrationLockTimeoutMs: 1500,
      });
      try {
        const failure = await database.migrate().catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(MigrationLockTimeoutError);
        expect(String((failure as Error).message)).toMatch(/migration lock \(advisory lock 7240431\), held by pid \d+/);
        expect(String((failure as Error).message)).not.toContain('\n');
        const [warned] = log.find('warn', 'waiting for the migration lock');
        expect(warned?.holder).toMatch(/^pid \d+/);
      } finally {
        await database.close();
        await blocker.end();
      }
    }, 20_000);
  },
);
