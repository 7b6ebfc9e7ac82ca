/**
 * The test helper that starts a PostgreSQL primary, a streaming hot standby and a PgBouncer of
 * the test's own (test/support/postgres-cluster.ts): what the replica and PgBouncer suites rely
 * on, checked on the real servers. Skipped without PostgreSQL 15's server binaries or pgbouncer.
 */
import { existsSync } from 'node:fs';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  activity,
  advisoryLocks,
  clusterToolsMissing,
  type PgBouncer,
  type Primary,
  parseLsn,
  postgresCluster,
  type Standby,
  sqlOn,
} from './support/postgres-cluster.js';
import { isStillRunning, processTree } from './support/process-tree.js';

const MISSING = clusterToolsMissing();

/** The start-up parameters the service's pool sends (src/db/database.ts). */
const SERVICE_CONNECTION = { statement_timeout: 5000, application_name: 'name-profile-service', jit: 'off' };

describe.skipIf(MISSING !== undefined)(
  `a primary, a hot standby and a transaction-mode PgBouncer of the test's own (needs PostgreSQL 15 and pgbouncer; skipped without them${MISSING === undefined ? '' : `: ${MISSING}`})`,
  () => {
    const cluster = postgresCluster();
    let primary: Primary;
    let standby: Standby;
    let bouncer: PgBouncer;

    beforeAll(async () => {
      primary = await cluster.startPrimary();
      standby = await cluster.startStandby(primary);
      bouncer = await cluster.startPgBouncer(primary, { poolMode: 'transaction' });
      await sqlOn(primary, 'create table notes (id int primary key, body text not null)');
    });
    afterAll(() => cluster.close());

    const bodyOn = (server: Primary | Standby, id: number) =>
      sqlOn<{ body: string }>(server, 'select body from notes where id = $1', [id]);

    it('a row written on the primary is on the standby once waitForReplay resolves', async () => {
      await sqlOn(primary, `insert into notes values (1, 'replicated')`);
      await standby.waitForReplay();
      expect(await bodyOn(standby, 1)).toEqual([{ body: 'replicated' }]);
    });

    it('with replay paused the standby receives a new row but does not show it; after resume it does', async () => {
      await standby.pauseReplay();
      let lsn: string;
      try {
        await sqlOn(primary, `insert into notes values (2, 'held back')`);
        lsn = await primary.walLsn();
        // Received and on the standby's disk, only not applied: the pause alone holds it back.
        await vi.waitFor(
          async () => {
            const [received] = await sqlOn<{ lsn: string }>(standby, 'select pg_last_wal_receive_lsn()::text as lsn');
            expect(parseLsn(received!.lsn)).toBeGreaterThanOrEqual(parseLsn(lsn));
          },
          { timeout: 10_000, interval: 20 },
        );
        expect(await bodyOn(standby, 2)).toEqual([]);
        expect(parseLsn(await standby.replayLsn())).toBeLessThan(parseLsn(lsn));
      } finally {
        await standby.resumeReplay();
      }
      await standby.waitForReplay(lsn);
      expect(await bodyOn(standby, 2)).toEqual([{ body: 'held back' }]);
    });

    it('the standby refuses writes and LISTEN', async () => {
      await expect(sqlOn(standby, `insert into notes values (3, 'refused')`)).rejects.toMatchObject({
        code: '25006',
        message: 'cannot execute INSERT in a read-only transaction',
      });
      await expect(sqlOn(standby, 'listen profile_changes')).rejects.toMatchObject({
        code: '25006',
        message: 'cannot execute LISTEN during recovery',
      });
    });

    it('PgBouncer in transaction mode passes queries with prepare: false to the primary', async () => {
      const client = postgres(bouncer.url, {
        max: 2,
        prepare: false,
        onnotice: () => {},
        connection: { application_name: 'through-pgbouncer' },
      });
      try {
        const rows = await client`select ${41}::int + 1 as answer, current_setting('application_name') as app`;
        expect([...rows]).toEqual([{ answer: 42, app: 'through-pgbouncer' }]);
      } finally {
        await client.end();
      }
      const pools = await sqlOn<{ database: string; pool_mode: string }>({ url: bouncer.adminUrl }, 'show pools');
      expect(pools.find((pool) => pool.database === primary.database)).toMatchObject({ pool_mode: 'transaction' });
      // PgBouncer's server connection, still named after the client that used it last.
      expect((await activity(primary)).map((session) => session.applicationName)).toContain('through-pgbouncer');
    });

    it("PgBouncer refuses the service's start-up parameters (statement_timeout) with 08P01", async () => {
      const client = postgres(bouncer.url, {
        max: 1,
        prepare: false,
        onnotice: () => {},
        connection: SERVICE_CONNECTION,
      });
      try {
        await expect(client`select 1`).rejects.toMatchObject({
          code: '08P01',
          message: 'unsupported startup parameter: statement_timeout',
        });
      } finally {
        await client.end();
      }
    });

    it('advisoryLocks and activity show which session holds which advisory lock', async () => {
      const holder = postgres(primary.url, {
        max: 1,
        onnotice: () => {},
        connection: { application_name: 'lock-holder' },
      });
      try {
        await holder`select pg_advisory_lock(${7_240_431}::int8), pg_advisory_lock(${-5_000_000_000}::int8)`;
        await holder`select pg_advisory_lock(${-1}::int4, ${2}::int4)`;
        const locks = await advisoryLocks(primary);
        const [session] = (await activity(primary)).filter((s) => s.applicationName === 'lock-holder');
        expect(session?.query).toContain('pg_advisory_lock');
        expect(
          locks.map(({ pid, applicationName, key, keys, granted }) => ({ pid, applicationName, key, keys, granted })),
        ).toEqual(
          expect.arrayContaining([
            { pid: session?.pid, applicationName: 'lock-holder', key: 7_240_431n, keys: undefined, granted: true },
            { pid: session?.pid, applicationName: 'lock-holder', key: -5_000_000_000n, keys: undefined, granted: true },
            { pid: session?.pid, applicationName: 'lock-holder', key: undefined, keys: [-1, 2], granted: true },
          ]),
        );
      } finally {
        await holder.end();
      }
      // The session's end releases them, once its backend has exited.
      await vi.waitFor(async () => expect(await advisoryLocks(primary)).toEqual([]), { timeout: 5_000, interval: 20 });
    });

    it('a stopped standby refuses connections, and started again catches up through its slot', async () => {
      const tree = processTree(standby.pid!);
      await standby.stop();
      expect(standby.pid).toBeUndefined();
      expect(tree.filter(isStillRunning)).toEqual([]);
      await expect(sqlOn(standby, 'select 1')).rejects.toMatchObject({ code: 'ECONNREFUSED' });

      await sqlOn(primary, `insert into notes values (4, 'written while the standby was down')`);
      await standby.start();
      await standby.waitForReplay();
      expect(await bodyOn(standby, 4)).toEqual([{ body: 'written while the standby was down' }]);
    });

    it('kill() ends the standby and all its processes at once, and it starts again', async () => {
      const tree = processTree(standby.pid!);
      expect(tree.length).toBeGreaterThan(1);
      await standby.kill();
      expect(tree.filter(isStillRunning)).toEqual([]);

      await sqlOn(primary, `insert into notes values (5, 'written after the crash')`);
      await standby.start();
      await standby.waitForReplay();
      expect(await bodyOn(standby, 5)).toEqual([{ body: 'written after the crash' }]);
    });

    // Last: it ends the servers the tests above share.
    it('close() stops every process it started, by PID, and removes every folder', async () => {
      const processes = cluster.pids().flatMap((pid) => processTree(pid));
      const folders = cluster.folders();
      expect(folders).toHaveLength(3);
      expect(folders.every((folder) => existsSync(folder))).toBe(true);

      await cluster.close();

      expect(processes.filter(isStillRunning)).toEqual([]);
      expect(folders.filter((folder) => existsSync(folder))).toEqual([]);
      expect(cluster.pids()).toEqual([]);
    });
  },
);
