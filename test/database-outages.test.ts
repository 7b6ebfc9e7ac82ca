/**
 * `DatabaseHandle.readPrimary` and `readReplica`, the entry points of the request path's reads:
 * every way PostgreSQL can be unavailable must end a read within its bound with an
 * UnavailableError (the API's 503) whose causes say why, and the handle must recover by itself
 * when the cause is gone; a
 * slow link must give slow answers, not failures, while they fit in the deadline. The causes come
 * from test/support/outage-causes.ts, which the HTTP-level suite (db-faults) reuses.
 */

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../src/db/database.js';
import { isDatabaseUnavailable } from '../src/db/driver-errors.js';
import { sql } from '../src/db/drizzle.js';
import { DatabaseUnavailableError } from '../src/db/outage-gate.js';
import { findProfilesByNames } from '../src/db/queries.js';
import { UnavailableError } from '../src/errors/service-error.js';
import { useTestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { STARTUP_ERRORS } from './support/fake-postgres.js';
import { createOutageScene, OUTAGE_CAUSES, type OutageScene } from './support/outage-causes.js';
import { createProxiedDemoDatabase } from './support/proxied-database.js';

const postgresUrl = process.env.TEST_DATABASE_URL;

/** The `code` of every error in the cause chain. */
function codesOf(error: unknown): unknown[] {
  const codes: unknown[] = [];
  for (let current = error; current instanceof Error; current = current.cause) {
    codes.push((current as { code?: unknown }).code);
  }
  return codes;
}

/** Resolves once `read` succeeds; fails, with the last failure, past `withinMs`. */
async function recovers(read: () => Promise<unknown>, withinMs: number): Promise<void> {
  await eventually(() => read().then(() => true), { what: 'a successful read', withinMs, everyMs: 50 });
}

describe('isDatabaseUnavailable', () => {
  const postgresError = (code: string, severity: string) =>
    Object.assign(new Error('from PostgreSQL'), { code, severity, severity_local: severity });
  const wrapped = (cause: unknown) => new Error('Failed query: select ...', { cause });

  it('takes 55000 for unavailability only when it ends the session (FATAL)', () => {
    // ALTER DATABASE ... ALLOW_CONNECTIONS false: "database ... is not currently accepting connections".
    expect(isDatabaseUnavailable(wrapped(postgresError('55000', 'FATAL')))).toBe(true);
    // currval() before nextval() and other mistakes of a query: the session goes on.
    expect(isDatabaseUnavailable(wrapped(postgresError('55000', 'ERROR')))).toBe(false);
  });

  it('knows the refusal of the outage gate whatever closed it', () => {
    expect(isDatabaseUnavailable(new DatabaseUnavailableError(undefined))).toBe(true);
  });
});

describe('reads on PGlite', () => {
  const database = useTestDatabase('pglite');

  it("runs the work and hands back its result and the query's own errors unchanged", async () => {
    const { handle } = database;
    for (const read of [handle.readPrimary, handle.readReplica]) {
      await expect(read((db) => findProfilesByNames(db, ['nobody@me']))).resolves.toEqual([]);
      const failure = new Error('not a database error');
      await expect(read(() => Promise.reject(failure))).rejects.toBe(failure);
    }
  });

  it("raises the database's unavailability as an UnavailableError, its cause kept", async () => {
    const { handle } = database;
    const lost = Object.assign(new Error('Connection terminated'), { code: 'CONNECTION_CLOSED' });
    for (const read of [handle.readPrimary, handle.readReplica]) {
      const failure = await read(() => Promise.reject(new Error('Failed query', { cause: lost }))).catch(
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(UnavailableError);
      expect(codesOf(failure)).toContain('CONNECTION_CLOSED');
    }
  });
});

describe.skipIf(postgresUrl === undefined)('reads on PostgreSQL, for every way it can be unavailable', () => {
  // The deadline of a read (DB_READ_TIMEOUT_MS), 2.5 s here: longer than the connect timeout plus
  // the statement timeout, so that each cause fails with its own error first. Every failure must
  // come within it (plus scheduling slack on a busy machine).
  const settings = { connectTimeoutSeconds: 1, statementTimeoutMs: 500, readTimeoutMs: 2500, poolSize: 2 };
  const deadlineMs = settings.readTimeoutMs;
  const SLACK_MS = 1000;
  // The reconnect delay (at most 1 s) and the gate's cool-down, with room for a busy machine.
  const RECOVERY_BOUND_MS = 4000;
  let scene: OutageScene;
  let handle: DatabaseHandle;

  beforeAll(async () => {
    scene = await createOutageScene();
  }, 60_000);

  afterAll(async () => {
    await scene?.close();
  });

  // A handle per test: a cause meets a fresh pool, whatever the previous one left behind.
  beforeEach(async () => {
    handle = await openDatabase({ url: scene.url, dataDir: '', ...settings });
    // The handle's own view as well: its pool holds no connection any more.
    scene.clientLetGo = async () => {
      await eventually(() => scene.fake.openConnections === 0, 'the fake without connections');
      await eventually(() => handle.stats?.().openConnections === 0, 'the pool without connections');
    };
  });

  afterEach(async () => {
    await handle?.close();
  });

  const read = () => handle.readPrimary((db) => findProfilesByNames(db, ['demo@me']));

  it.each(OUTAGE_CAUSES)(
    '$name: the read fails as unavailable within the deadline; the handle recovers',
    async (cause) => {
      expect(await read()).toHaveLength(1);
      let readStartedAt = 0;
      try {
        const failure = await cause
          .provoke(scene, () => {
            readStartedAt = performance.now();
            return read();
          })
          .then(
            () => new Error('the read succeeded'),
            (error: unknown) => error,
          );
        const failedAfterMs = performance.now() - readStartedAt;
        expect(failure, String(failure)).toBeInstanceOf(UnavailableError);
        expect(codesOf(failure)).toContain(cause.code);
        expect(failedAfterMs).toBeLessThan(deadlineMs + SLACK_MS);
      } finally {
        await cause.clear(scene);
      }
      await recovers(read, RECOVERY_BOUND_MS);
      expect(await read()).toHaveLength(1);
    },
    30_000,
  );

  it('refuses reads at once while PostgreSQL is known to be down, as unavailable, and lets them through again', async () => {
    expect(await read()).toHaveLength(1);
    await scene.fake.behave(STARTUP_ERRORS.tooManyClients, { resetOpen: true });
    try {
      await scene.clientLetGo();
      // Three failures in a row close the gate.
      for (let i = 0; i < 3; i += 1) {
        const failure = await read().catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(UnavailableError);
        expect(codesOf(failure)).toContain('53300');
      }
      const attemptsBefore = scene.fake.acceptedConnections;
      const refused = await read().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(UnavailableError);
      expect((refused as UnavailableError).cause).toBeInstanceOf(DatabaseUnavailableError);
      // Refused without a connection attempt.
      expect(scene.fake.acceptedConnections).toBe(attemptsBefore);
    } finally {
      await scene.fake.behave({ kind: 'forward' });
    }
    await recovers(read, RECOVERY_BOUND_MS);
  }, 30_000);

  it('does not hammer a server that hangs up on every new session', async () => {
    // One connection, so every start is the same connection's. postgres.js alone starts again at
    // once when a server closes a session during its start without a word (porsager/postgres#1193),
    // in a loop for as long as that lasts; the sockets allow a pool of one connection one failing
    // start a second.
    await handle.close();
    handle = await openDatabase({ url: scene.url, dataDir: '', ...settings, poolSize: 1 });
    expect(await read()).toHaveLength(1);
    await scene.fake.behave({ kind: 'hang-up' }, { resetOpen: true });
    try {
      await scene.clientLetGo();
      const attemptsBefore = scene.fake.acceptedConnections;
      const started = performance.now();
      // The read ends at its deadline: meanwhile the driver keeps starting the connection.
      await expect(read()).rejects.toBeInstanceOf(UnavailableError);
      const elapsedMs = performance.now() - started;
      expect(elapsedMs).toBeLessThan(deadlineMs + SLACK_MS);
      const attempts = scene.fake.acceptedConnections - attemptsBefore;
      expect(attempts).toBeGreaterThan(1);
      expect(attempts).toBeLessThanOrEqual(Math.ceil(elapsedMs / 1000) + 1);
    } finally {
      await scene.fake.behave({ kind: 'forward' });
    }
    await recovers(read, RECOVERY_BOUND_MS);
  }, 30_000);

  it('fails a read at once with the refusal when the server refuses sessions after a backend died under a read', async () => {
    // A restart: the backend dies under a read, then the server refuses sessions while it starts.
    // postgres.js 3.4.9 took the refusal for the dead read's error and started again at once, in
    // a loop, while the next read waited for its deadline (patches/postgres+3.4.9.patch).
    await handle.close();
    handle = await openDatabase({ url: scene.url, dataDir: '', ...settings, poolSize: 1 });
    expect(await read()).toHaveLength(1);
    const terminated = OUTAGE_CAUSES.find((cause) => cause.code === 'CONNECTION_CLOSED');
    await expect(terminated?.provoke(scene, read)).rejects.toBeInstanceOf(UnavailableError);
    await scene.fake.behave(STARTUP_ERRORS.startingUp, { resetOpen: true });
    try {
      await scene.clientLetGo();
      const failure = await read().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(UnavailableError);
      expect(codesOf(failure)).toContain('57P03');
    } finally {
      await scene.fake.behave({ kind: 'forward' });
    }
    await recovers(read, RECOVERY_BOUND_MS);
  }, 30_000);

  it("lets a query's own 55000 through as an ordinary error", async () => {
    const failure = await handle
      .readPrimary((db) =>
        db.transaction(async (tx) => {
          await tx.execute(sql`create temporary sequence never_advanced`);
          return tx.execute(sql`select currval('never_advanced')`);
        }),
      )
      .catch((error: unknown) => error);
    expect(codesOf(failure)).toContain('55000');
    expect(failure).not.toBeInstanceOf(UnavailableError);
    // And the database is up: the gate stays open.
    expect(await read()).toHaveLength(1);
  });

  it('keeps the readiness probe within the same deadline while connections are silent', async () => {
    expect(await read()).toHaveLength(1);
    scene.proxy.cut('blackhole');
    try {
      const started = performance.now();
      await expect(handle.ping()).rejects.toSatisfy(isDatabaseUnavailable);
      expect(performance.now() - started).toBeLessThan(deadlineMs + SLACK_MS);
    } finally {
      scene.proxy.restore();
    }
    await recovers(() => handle.ping(), RECOVERY_BOUND_MS);
  }, 30_000);
});

describe.skipIf(postgresUrl === undefined)('reads on a slow link', () => {
  it('answers a burst of reads over 1.5 s of latency each way, slowly but all of them', async () => {
    const proxied = await createProxiedDemoDatabase();
    // The service's defaults (connect 5 s, statement 5 s), a pool of 4, and a read deadline of
    // 11 s: the default of 2 s is too short for a link this slow (docs/database-outages.md).
    const handle = await openDatabase({ url: proxied.url, dataDir: '', poolSize: 4, readTimeoutMs: 11_000 });
    const names = ['demo@me', 'empty@me'];
    const burst = (size: number) =>
      Promise.all(
        Array.from({ length: size }, (_, i) => handle.readPrimary((db) => findProfilesByNames(db, [names[i % 2]!]))),
      );
    try {
      proxied.proxy.setLatency(1500);
      // A cold pool: each read opens a connection (start-up, then the statement's describe and
      // execute: three round trips of 3 s), which has to fit in the deadline.
      const cold = await burst(4);
      expect(cold.map((rows) => rows[0]?.name)).toEqual(['demo@me', 'empty@me', 'demo@me', 'empty@me']);
      // Then more reads at once than there are connections: they queue and pipeline.
      const warm = await burst(12);
      expect(warm.every((rows) => rows.length === 1)).toBe(true);
    } finally {
      proxied.proxy.setLatency(0);
      await handle.close();
      await proxied.close();
    }
  }, 60_000);
});
