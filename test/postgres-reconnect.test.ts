/**
 * A pooled connection whose session died under a statement starts its next session cleanly:
 * the next session's startup message is sent, a refusal of that session fails the query that
 * waits for it (with the server's SQLSTATE, at once), and a session that starts serves its first
 * query. postgres.js 3.4.9 did none of the three after a backend died between a statement's Parse
 * and its answer (patches/postgres+3.4.9.patch, src/db/README.md): a Sync it had buffered for the
 * dead socket kept every later write of the connection from being scheduled, and the dead
 * session's query took the next session's refusal for its own. Under an outage with load that was
 * a connection the pool counted as open that never started, and reads handed to it waited for
 * their deadline long after PostgreSQL was back (docs/database-outages.md).
 *
 * The server is test/support/scripted-postgres.ts, which produces that sequence on demand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServicePool, servicePool } from '../src/db/postgres-client.js';
import { withDeadline } from '../src/db/postgres-deadlines.js';
import { type ScriptedPostgres, startScriptedPostgres } from './support/scripted-postgres.js';

/** Longer than any answer of a local stand-in; a read that takes it is a read that hangs. */
const HANG_MS = 10_000;

describe('a pooled connection after its session died under a statement', () => {
  let server: ScriptedPostgres;
  let pool: ServicePool;

  beforeAll(async () => {
    server = await startScriptedPostgres();
    // One connection, so every query meets the connection whose session died. The connect
    // timeout is longer than the bound below: a start that is never sent must not be rescued by it.
    pool = servicePool(server.url, {
      poolSize: 1,
      connectTimeoutSeconds: 30,
      statementTimeoutMs: 5000,
      poolMode: 'session',
    });
  });
  afterAll(async () => {
    await pool?.end();
    await server?.close();
  });

  // A statement new to the connection each time (its text names the value), as the first
  // statements of a new session are: described before it is bound.
  const select = (value: number) =>
    withDeadline(
      () =>
        pool.sql
          .unsafe<{ x: number }[]>(`select $1::int as x -- ${value}`, [value], { prepare: true })
          .then((rows) => [...rows]),
      HANG_MS,
    );
  const failureOf = (read: Promise<unknown>) =>
    read.then(
      () => undefined,
      (error: unknown) => error as { code?: string; message?: string },
    );

  it('answers while the server is healthy', async () => {
    await expect(select(1)).resolves.toEqual([{ x: 1 }]);
  });

  it('fails the statement whose backend dies before answering it', async () => {
    // A new statement on a connection is described first: the session dies between its Parse
    // and the answer, with the driver's Sync for it still buffered.
    server.behave({ kind: 'terminate-at-statement' });
    const failure = await failureOf(select(2));
    expect(failure?.code).toMatch(/^(CONNECTION_CLOSED|57P01)$/);
  });

  it('sends the next session its startup and fails the waiting query with the refusal, at once', async () => {
    server.behave({
      kind: 'refuse',
      code: '55000',
      message: 'database "scripted" is not currently accepting connections',
    });
    const startupsBefore = server.startups;
    const failure = await failureOf(select(3));
    expect(failure?.code).toBe('55000');
    expect(server.startups).toBeGreaterThan(startupsBefore);
  });

  it('serves the first query of the next session that starts, not an old error', async () => {
    server.behave({ kind: 'serve' });
    await expect(select(4)).resolves.toEqual([{ x: 4 }]);
    await expect(select(5)).resolves.toEqual([{ x: 5 }]);
  });

  it('fails the statements of a transaction whose session is gone, without an uncaught exception', async () => {
    // A statement written to a connection after its socket closed (the transaction's next one)
    // must fail: Vitest fails the run on an uncaught exception. The service's transactions never
    // send one (src/db/postgres-transactions.ts: postgres.js then also moves the closed connection
    // out of its pool's reach), so a pool of its own.
    const own = servicePool(server.url, {
      poolSize: 1,
      connectTimeoutSeconds: 30,
      statementTimeoutMs: 5000,
      poolMode: 'session',
    });
    try {
      let bodyDone: Promise<Array<string | undefined>> = Promise.resolve([]);
      const transaction = own.sql.begin((tx) => {
        bodyDone = (async () => {
          await tx.unsafe('select $1::int as x -- in a transaction', [6], { prepare: true });
          server.behave({ kind: 'terminate-at-statement' });
          const died = await failureOf(tx.unsafe('select $1::int as x -- dies', [7], { prepare: true }));
          // postgres.js fails begin() as soon as the connection closes; the body goes on.
          const after = await failureOf(tx.unsafe('select $1::int as x -- after', [8], { prepare: true }));
          return [died?.code, after?.code];
        })();
        return bodyDone;
      });
      const failure = await failureOf(transaction);
      expect(await bodyDone).toEqual([expect.stringMatching(/^(CONNECTION_CLOSED|57P01)$/), 'CONNECTION_CLOSED']);
      expect(failure?.code).toMatch(/^(CONNECTION_CLOSED|57P01)$/);
    } finally {
      server.behave({ kind: 'serve' });
      await own.end();
    }
  });
});
