/**
 * A transaction whose PostgreSQL backend is terminated fails with the server's reason instead
 * of crashing the process (postgres.js defect porsager/postgres#1208, contained in
 * src/db/postgres-transactions.ts). Vitest fails a run on an uncaught exception, which is what
 * the defect produced: these tests fail without the containment.
 */

import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import { singleSession } from '../src/db/postgres-client.js';
import { describeFailure } from '../src/errors/cause-chain.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { startTcpProxy } from './support/tcp-proxy.js';

const onPostgres = databaseKinds().includes('postgres');

/** Rows of a raw statement on PostgreSQL (postgres.js answers an array). */
async function rows<T>(db: Pick<Database, 'execute'>, statement: ReturnType<typeof sql>): Promise<T[]> {
  return (await db.execute(statement)) as unknown as T[];
}

const SETTINGS = { connectTimeoutSeconds: 5, poolMode: 'session' } as const;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!onPostgres)('a transaction whose backend is terminated', () => {
  const database = useTestDatabase('postgres');

  async function terminate(pid: number): Promise<void> {
    const admin = postgres(database.testDb.url ?? '', { max: 1, onnotice: () => {} });
    try {
      await admin`select pg_terminate_backend(${pid})`;
    } finally {
      await admin.end();
    }
  }

  /** Until backend `pid` runs a statement that starts with `text` (pg_stat_activity says so). */
  async function running(pid: number, text: string): Promise<void> {
    const admin = postgres(database.testDb.url ?? '', { max: 1, onnotice: () => {} });
    try {
      const runs = async () => {
        const [row] = await admin<{ state: string; query: string }[]>`
          select state, query from pg_stat_activity where pid = ${pid}`;
        return row?.state === 'active' && row.query.startsWith(text);
      };
      await eventually(runs, { what: `backend ${pid} running ${text}`, everyMs: 10 });
    } finally {
      await admin.end();
    }
  }

  /**
   * A statement on the pool after a round: the event loop has been through the I/O of the lost
   * connection's end and the turns after it, where the defect's stray setImmediate threw.
   */
  async function poolAnswers(): Promise<void> {
    const [row] = await rows<{ one: number }>(database.handle.db, sql`select 1 as one`);
    expect(row?.one).toBe(1);
  }

  async function failure(transaction: Promise<unknown>): Promise<string> {
    const error: unknown = await transaction.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(Error);
    return describeFailure(error);
  }

  it('fails with the reason when the backend is terminated during a statement', async () => {
    for (let round = 0; round < 5; round += 1) {
      const reason = await failure(
        database.handle.db.transaction(async (tx) => {
          const [row] = await rows<{ pid: number }>(tx, sql`select pg_backend_pid() as pid`);
          const sleeping = tx.execute(sql`select pg_sleep(5)`).then(
            () => undefined,
            (error: unknown) => error,
          );
          await running(Number(row?.pid), 'select pg_sleep');
          await terminate(Number(row?.pid));
          throw await sleeping;
        }),
      );
      expect(reason).toMatch(/^(57P01|ECONNRESET|CONNECTION_CLOSED)/);
      await poolAnswers();
    }
  });

  it('fails with the reason when the backend is terminated between two statements', async () => {
    for (let round = 0; round < 5; round += 1) {
      const reason = await failure(
        database.handle.db.transaction(async (tx) => {
          const [row] = await rows<{ pid: number }>(tx, sql`select pg_backend_pid() as pid`);
          await terminate(Number(row?.pid));
          await pause(round * 20); // the close may or may not have arrived yet
          await tx.execute(sql`select 1`);
        }),
      );
      expect(reason).toMatch(/^(57P01|ECONNRESET|CONNECTION_CLOSED)/);
      await poolAnswers();
    }
  });

  it('leaves the pool working, and still rolls back a body that fails for another reason', async () => {
    const [answer] = await rows<{ one: number }>(database.handle.db, sql`select 1 as one`);
    expect(answer?.one).toBe(1);
    await database.handle.db.execute(sql`create table if not exists lost_connection_probe (n int)`);
    const failed = database.handle.db.transaction(async (tx) => {
      await tx.execute(sql`insert into lost_connection_probe values (1)`);
      throw new Error('the body gave up');
    });
    await expect(failed).rejects.toThrow('the body gave up');
    expect(await rows(database.handle.db, sql`select * from lost_connection_probe`)).toEqual([]);
  });

  it('fails at once, and rolls back, when the body’s own output fails with a socket error (an export piped to head)', async () => {
    await database.handle.db.execute(sql`create table if not exists lost_connection_probe (n int)`);
    const closedPipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE', syscall: 'write' });
    const started = performance.now();
    const failed = database.handle.db.transaction(async (tx) => {
      await tx.execute(sql`insert into lost_connection_probe values (2)`);
      throw closedPipe;
    });
    await expect(failed).rejects.toBe(closedPipe);
    // Taken for a lost connection, the failure would wait for a close that never comes (10 s).
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await rows(database.handle.db, sql`select * from lost_connection_probe where n = 2`)).toEqual([]);
  });
});

/**
 * A single session (LISTEN, leader lock, migrations) closed while it is still starting. postgres.js
 * runs its array-type query on a new connection as a promise nobody awaits, so a close that cuts
 * that query short was an unhandled rejection (CONNECTION_DESTROYED): it failed a test run, and
 * would end a service process whose shutdown caught the listening session reconnecting. The
 * sessions fetch no types (src/db/postgres-client.ts); without that, these closes fail the test.
 */
describe.skipIf(!onPostgres)('a single session closed while it starts', () => {
  const database = useTestDatabase('postgres');

  it('rejects only what it was asked, whenever the close comes', async () => {
    const url = new URL(database.testDb.url ?? '');
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    // Each round trip of the start (and of the type query, were it sent) takes 60 ms.
    proxy.setLatency(30);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      for (let closeAfterMs = 0; closeAfterMs <= 600; closeAfterMs += 30) {
        const session = singleSession(proxy.urlThrough(url.toString()), SETTINGS, 'nps-test single session');
        const asked = session`select 1 as one`.then(
          (rows) => rows.length,
          (error: unknown) => error,
        );
        await pause(closeAfterMs);
        await session.end({ timeout: 0.001 });
        const outcome = await asked;
        if (outcome !== 1)
          expect(outcome, `closed after ${closeAfterMs} ms`).toMatchObject({ code: expect.any(String) });
      }
      // A rejection nobody handles is reported a turn after it happens; the last close's can come
      // with its connection's end, which has no event here: a short window after the last close.
      await pause(50);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await proxy.close();
    }
  }, 30_000);
});
