/**
 * The "several database servers" part of `npm run bench` (docs/scaling.md): REST random names
 * against the service on a primary of its own, reading from a streaming replica, in transaction
 * mode (unnamed statements, no start-up parameters) directly on the primary, and through a
 * transaction-mode PgBouncer. The servers are the benchmark's own (test/support/postgres-cluster.ts)
 * with the dataset loaded; every server, the service included, shares the same two cores, so
 * throughput cannot grow with a replica here: the figure that carries over to real machines is
 * the CPU each server spends per request, measured from /proc for each process tree.
 */
import { analyzeDataTables, importLines } from '../src/data/importer.js';
import { openDatabase } from '../src/db/database.js';
import {
  clusterToolsMissing,
  type PgBouncer,
  type Primary,
  postgresCluster,
  type Standby,
} from '../test/support/postgres-cluster.js';
import { cpuSecondsOf, treeCpuSeconds as treeCpuSecondsOf } from '../test/support/process-tree.js';
import type { SpawnedProcess } from '../test/support/server-process.js';

export interface ServersScenario {
  key: string;
  label: string;
  env: Record<string, string>;
}

export interface CpuPerRequest {
  /** µs of CPU per request, by process group. */
  service: number;
  primary: number;
  standby: number;
  pgbouncer: number;
}

export interface DatabaseServers {
  primary: Primary;
  standby: Standby;
  bouncer: PgBouncer;
  scenarios: ServersScenario[];
  /** CPU seconds used so far by each group of processes. */
  cpuSeconds(service: SpawnedProcess): CpuPerRequest;
  close(): Promise<void>;
}

/** CPU seconds used so far by `pid` and every process below it (a cluster's workers); 0 for none. */
export const treeCpuSeconds = (pid: number | undefined) => (pid === undefined ? 0 : treeCpuSecondsOf(pid));

/** Why this part cannot run here (no PostgreSQL 15 binaries or pgbouncer), or undefined. */
export const databaseServersMissing = clusterToolsMissing;

/** A primary with the dataset, a streaming replica of it, a PgBouncer in front of the primary. */
export async function startDatabaseServers(dataset: Iterable<string>, poolSize: string): Promise<DatabaseServers> {
  const cluster = postgresCluster();
  try {
    // As the local PostgreSQL runs (durable, 128 MB of buffers), not as the tests' throwaway servers.
    const primary = await cluster.startPrimary({
      settings: { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on', shared_buffers: '128MB' },
    });
    const loader = await openDatabase({ url: primary.url, dataDir: '', statementTimeoutMs: 600_000 });
    try {
      await loader.migrate();
      const report = await importLines(loader.db, dataset, { bulk: true });
      if (!report.ok)
        throw new Error(
          `dataset import into the benchmark's primary failed: ${JSON.stringify(report.problems.slice(0, 3))}`,
        );
      await analyzeDataTables(loader.db);
    } finally {
      await loader.close();
    }
    const standby = await cluster.startStandby(primary);
    await standby.waitForReplay(undefined, 120_000);
    const bouncer = await cluster.startPgBouncer(primary, {
      poolMode: 'transaction',
      defaultPoolSize: Number(poolSize),
      maxClientConn: 200,
    });
    const direct = { DATABASE_URL: primary.url, DB_POOL_SIZE: poolSize };
    return {
      primary,
      standby,
      bouncer,
      scenarios: [
        { key: 'serversPrimary', label: 'primary only (session mode, named statements)', env: direct },
        {
          key: 'serversReplica',
          label: 'reads on the streaming replica',
          env: { ...direct, DATABASE_REPLICA_URLS: standby.url },
        },
        {
          key: 'serversUnnamed',
          label: 'transaction mode on the primary directly (unnamed statements, no start-up parameters)',
          env: { ...direct, DATABASE_POOL_MODE: 'transaction', DATABASE_LISTEN_URL: primary.url },
        },
        {
          key: 'serversPgBouncer',
          label: 'through PgBouncer 1.18 in transaction mode',
          env: {
            DATABASE_URL: bouncer.url,
            DB_POOL_SIZE: poolSize,
            DATABASE_POOL_MODE: 'transaction',
            DATABASE_LISTEN_URL: primary.url,
          },
        },
      ],
      cpuSeconds: (service) => ({
        service: cpuSecondsOf(service.pid) ?? 0,
        primary: treeCpuSeconds(primary.pid),
        standby: treeCpuSeconds(standby.pid),
        pgbouncer: treeCpuSeconds(bouncer.pid),
      }),
      close: () => cluster.close(),
    };
  } catch (error) {
    await cluster.close();
    throw error;
  }
}

/** µs of CPU per request of each group between two readings. */
export function cpuPerRequest(before: CpuPerRequest, after: CpuPerRequest, requests: number): CpuPerRequest {
  const per = (key: keyof CpuPerRequest) => Math.round(((after[key] - before[key]) * 1e6) / Math.max(requests, 1));
  return { service: per('service'), primary: per('primary'), standby: per('standby'), pgbouncer: per('pgbouncer') };
}
