/**
 * PostgreSQL going away and coming back, while the service runs. A TCP proxy inside the test sits
 * between the service (a real `src/main.ts` process) and PostgreSQL; the test cuts it the two
 * ways networks and databases fail (connections reset and refused; connections held open with
 * no answer) and restores it. Every request must get its answer within a bound: 503 with
 * Retry-After (GraphQL: SERVICE_UNAVAILABLE) while the database is away, the data again once it
 * is back, without a restart.
 *
 * Then every way PostgreSQL can be unavailable (test/support/outage-causes.ts: refused, reset,
 * silent, refusing sessions with each SQLSTATE, backends terminated, ALLOW_CONNECTIONS false,
 * statement timeout) must answer 503, never 500, and recover; and a slow link must answer slowly,
 * not with 503s, while the answers fit in the deadline.
 *
 * The OutageGate, which makes those 503s immediate once the database is known to be down, is
 * tested on its own first.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SILENCE_MS } from '../src/db/change-feed.js';
import { isDatabaseUnavailable } from '../src/db/driver-errors.js';
import { DatabaseUnavailableError, OutageGate } from '../src/db/outage-gate.js';
import { DatabaseTimeoutError } from '../src/db/postgres-deadlines.js';
import { eventually } from './support/eventually.js';
import { createOutageScene, OUTAGE_CAUSES } from './support/outage-causes.js';
import { createProxiedDemoDatabase } from './support/proxied-database.js';
import { type LogLine, type ServerProcess, startServerProcess } from './support/server-process.js';
import type { CutMode } from './support/tcp-proxy.js';

const connectionLost = (): Error => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
const statementTimeout = (): Error =>
  Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });

describe('OutageGate', () => {
  it('refuses at once after connection failures, lets one probe through after the cool-down, and reopens on success', async () => {
    let now = 1_000;
    const gate = new OutageGate(500, 3, () => now);
    let attempts = 0;
    const failing = () => {
      attempts += 1;
      return Promise.reject(connectionLost());
    };
    const succeeding = () => {
      attempts += 1;
      return Promise.resolve('row');
    };

    await expect(gate.run(succeeding)).resolves.toBe('row');
    for (let i = 0; i < 3; i += 1) await expect(gate.run(failing)).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(attempts).toBe(4);

    // Down: refused without an attempt, as "database unavailable" (the cause says why).
    const refused = await gate.run(succeeding).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DatabaseUnavailableError);
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(attempts).toBe(4);

    // After the cool-down exactly one probe goes through while the others are still refused.
    now += 500;
    let releaseProbe: (value: string) => void = () => {};
    const probe = gate.run(() => {
      attempts += 1;
      return new Promise<string>((resolve) => {
        releaseProbe = resolve;
      });
    });
    await expect(gate.run(succeeding)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(attempts).toBe(5);
    releaseProbe('row');
    await expect(probe).resolves.toBe('row');

    // The probe succeeded: everything goes through again.
    await expect(gate.run(succeeding)).resolves.toBe('row');
    expect(gate.failures).toEqual({ unavailable: 3, statement_timeout: 0, refused: 2, query: 0 });
  });

  it('stays open for one lost connection while the database answers', async () => {
    const gate = new OutageGate(60_000);
    await expect(gate.run(() => Promise.reject(connectionLost()))).rejects.toThrow();
    await expect(gate.run(() => Promise.resolve(1))).resolves.toBe(1);
    await expect(gate.run(() => Promise.reject(connectionLost()))).rejects.toThrow();
    await expect(gate.run(() => Promise.reject(connectionLost()))).rejects.toThrow();
    // Two in a row, not three: still asking the database.
    await expect(gate.run(() => Promise.resolve(2))).resolves.toBe(2);
  });

  it('closes again at once when the probe fails', async () => {
    let now = 0;
    const gate = new OutageGate(100, 3, () => now);
    for (let i = 0; i < 3; i += 1) await expect(gate.run(() => Promise.reject(connectionLost()))).rejects.toThrow();
    now += 100;
    await expect(gate.run(() => Promise.reject(connectionLost()))).rejects.toMatchObject({ code: 'ECONNRESET' });
    await expect(gate.run(() => Promise.resolve(1))).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });

  it('does not close for a slow statement or an error of the query itself', async () => {
    const gate = new OutageGate(60_000);
    await expect(gate.run(() => Promise.reject(statementTimeout()))).rejects.toMatchObject({ code: '57014' });
    await expect(gate.run(() => Promise.reject(Object.assign(new Error('syntax'), { code: '42601' })))).rejects.toThrow(
      'syntax',
    );
    await expect(gate.run(() => Promise.resolve(1))).resolves.toBe(1);
    expect(gate.failures).toEqual({ unavailable: 0, statement_timeout: 1, refused: 0, query: 1 });
  });

  it('does not close when deadlines pass while the database answers other queries (a slow link)', async () => {
    let now = 0;
    const gate = new OutageGate(60_000, 3, () => now);
    const slowReads = Array.from({ length: 3 }, () => {
      let expire: () => void = () => {};
      const read = gate.run(
        () =>
          new Promise<never>((_, reject) => {
            expire = () => reject(new DatabaseTimeoutError(11_000));
          }),
      );
      return { read, expire: () => expire() };
    });
    now += 9_000;
    // Meanwhile another query was answered: the database is up, only slow.
    await expect(gate.run(() => Promise.resolve('row'))).resolves.toBe('row');
    now += 2_000;
    for (const slow of slowReads) {
      slow.expire();
      await expect(slow.read).rejects.toBeInstanceOf(DatabaseTimeoutError);
    }
    await expect(gate.run(() => Promise.resolve('row'))).resolves.toBe('row');
    // They still count as unavailable answers for the metrics.
    expect(gate.failures.unavailable).toBe(3);
  });

  it('closes when deadlines pass while nothing answers at all', async () => {
    let now = 0;
    const gate = new OutageGate(60_000, 3, () => now);
    await expect(gate.run(() => Promise.resolve('row'))).resolves.toBe('row');
    now += 1;
    for (let i = 0; i < 3; i += 1) {
      await expect(gate.run(() => Promise.reject(new DatabaseTimeoutError(2_500)))).rejects.toThrow();
    }
    await expect(gate.run(() => Promise.resolve('row'))).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });

  it('learns from health probes without refusing them', async () => {
    const gate = new OutageGate(60_000, 1);
    await expect(gate.run(() => Promise.reject(connectionLost()))).rejects.toThrow();
    await expect(gate.run(() => Promise.resolve(1))).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(gate.observe(() => Promise.resolve('pong'))).resolves.toBe('pong');
    await expect(gate.run(() => Promise.resolve(1))).resolves.toBe(1);
  });
});

const postgresUrl = process.env.TEST_DATABASE_URL;

/**
 * DB_CONNECT_TIMEOUT=1 and DB_STATEMENT_TIMEOUT_MS=500 bound the connection start and the
 * statement, the default DB_READ_TIMEOUT_MS (2 s) the whole database wait; a request may take
 * that plus its own work. A request that is not answered within this bound counts as hanging.
 */
const ANSWER_BOUND_MS = 6_000;
const RECOVERY_BOUND_MS = 20_000;

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  ms: number;
}

async function timedFetch(url: string, init: RequestInit = {}, boundMs = ANSWER_BOUND_MS): Promise<Answer> {
  const started = Date.now();
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(boundMs) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: kept as text.
  }
  return { status: response.status, headers: response.headers, body, ms: Date.now() - started };
}

const PROFILE_QUERY = 'query Lookup { profile(name: "demo@me") { name description } }';

function graphql(url: string): Promise<Answer> {
  return timedFetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: PROFILE_QUERY }),
  });
}

/** Fails the tests of a service that died with what it wrote, rather than with a socket error. */
function failWhenServiceExits(current: () => ServerProcess | undefined): void {
  afterEach(async () => {
    const service = current();
    if (service === undefined) return;
    const exit = await Promise.race([service.exited, Promise.resolve(undefined)]);
    if (exit === undefined) return;
    const lastLines = service.logs.slice(-20).map((line) => JSON.stringify(line));
    throw new Error(`the service exited (${JSON.stringify(exit)})\n${service.stderr}\n${lastLines.join('\n')}`);
  });
}

/** A service process (`src/main.ts`) on the database `open` makes, for the tests of a suite. */
interface ServiceRun<Database> {
  db: Database;
  service: ServerProcess;
}

/**
 * Opens a database and starts the service on it (`env` added to its DATABASE_URL) before the
 * suite's tests; after them runs `beforeClose`, stops the service and closes the database. A
 * service that dies fails the test with what it wrote.
 */
function serviceOn<Database extends { url: string; close(): Promise<void> }>(
  open: () => Promise<Database>,
  env: Record<string, string>,
  beforeClose: (db: Database) => void = () => {},
): ServiceRun<Database> {
  const run = {} as ServiceRun<Database>;
  beforeAll(async () => {
    run.db = await open();
    run.service = await startServerProcess({ env: { DATABASE_URL: run.db.url, ...env }, startTimeoutMs: 60_000 });
  }, 120_000);
  afterAll(async () => {
    if (run.db !== undefined) beforeClose(run.db);
    await run.service?.stop();
    await run.db?.close();
  });
  failWhenServiceExits(() => run.service);
  return run;
}

describe.skipIf(postgresUrl === undefined)('the service while PostgreSQL is unreachable', () => {
  const run = serviceOn(createProxiedDemoDatabase, {
    DB_CONNECT_TIMEOUT: '1',
    DB_STATEMENT_TIMEOUT_MS: '500',
    // Small, so that the outage reaches every connection of the pool.
    DB_POOL_SIZE: '2',
    // The database path itself: no profile cache in front of it (it has a suite below).
    PROFILE_CACHE_SIZE: '0',
    LOG_LEVEL: 'info',
  });

  async function expectHealthy(): Promise<void> {
    const ready = await timedFetch(`${run.service.url}/readyz`);
    expect(ready.status).toBe(200);
    const answer = await graphql(run.service.url);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { profile: { name: 'demo@me', description: expect.any(String) } } });
    const rest = await timedFetch(`${run.service.url}/api/demo@me`);
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ name: 'demo@me' });
  }

  async function expectUnavailable(): Promise<void> {
    // Liveness never depends on the database: the process is fine, a restart would not help.
    expect((await timedFetch(`${run.service.url}/healthz`)).status).toBe(200);

    const ready = await timedFetch(`${run.service.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(ready.body).toEqual({ status: 'unavailable', reason: 'database unreachable' });

    const answer = await graphql(run.service.url);
    expect(answer.status).toBe(200);
    const body = answer.body as {
      data?: { profile: unknown } | null;
      errors?: Array<{ message: string; extensions?: { code?: string } }>;
    };
    expect(body.errors?.map((error) => error.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);
    expect(body.errors?.[0]?.message).toBe('Service unavailable');

    const rest = await timedFetch(`${run.service.url}/api/demo@me`);
    expect(rest.status).toBe(503);
    expect(rest.body).toEqual({ error: 'Service unavailable' });
    expect(rest.headers.get('retry-after')).toMatch(/^\d+$/);
  }

  async function expectRecovery(): Promise<void> {
    await eventually(async () => (await timedFetch(`${run.service.url}/readyz`)).status === 200, {
      what: 'ready again',
      withinMs: RECOVERY_BOUND_MS,
    });
    await expectHealthy();
    // The same process answers: nothing was restarted.
    expect(run.service.logs.filter((line) => line.msg === 'listening').map((line) => line.pid)).toEqual([
      run.service.pid,
    ]);
  }

  it('serves normally through the proxy', async () => {
    await expectHealthy();
  });

  it.each<[CutMode, 'resume' | 'abandon', string]>([
    ['refuse', 'resume', 'connections reset and refused, then the database is back'],
    ['blackhole', 'resume', 'connections held open without an answer, then they answer again'],
    ['blackhole', 'abandon', 'connections held open without an answer, and only new connections work again'],
  ])(
    'answers 503 within the bound while cut (%s, then %s: %s) and recovers without a restart',
    async (mode, held) => {
      await expectHealthy();
      // Statements at once open every connection of the pool. Concurrent lookups share one
      // statement, so searches (a statement each) go along.
      const warm = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          timedFetch(`${run.service.url}/api/${i % 2 === 0 ? 'demo@me' : 'search?prefix=d'}`),
        ),
      );
      expect(warm.map((answer) => answer.status)).toEqual(Array(6).fill(200));
      expect(run.db.proxy.openConnections).toBe(2);
      const accepted = run.db.proxy.acceptedConnections;
      run.db.proxy.cut(mode);
      // Twice: the first round meets the broken pool, the second the known outage.
      await expectUnavailable();
      await expectUnavailable();
      // Many at once: none of them may hang either.
      const burst = await Promise.all(Array.from({ length: 12 }, () => timedFetch(`${run.service.url}/api/demo@me`)));
      expect(burst.map((answer) => answer.status)).toEqual(Array(12).fill(503));
      // With 'abandon' the pooled connections never answer again: the service has to give them
      // up by itself and connect anew.
      run.db.proxy.restore({ held });
      await expectRecovery();
      // Except when the held connections came back to life, the pool had to connect anew.
      if (mode === 'refuse' || held === 'abandon') expect(run.db.proxy.acceptedConnections).toBeGreaterThan(accepted);
    },
    60_000,
  );

  it('shows the outage in the metrics and the logs, without a 500 anywhere', async () => {
    const metrics = await timedFetch(`${run.service.url}/metrics`);
    const text = String(metrics.body);
    expect(text).toMatch(/^database_errors_total\{kind="unavailable"\} [1-9]/m);
    expect(text).toMatch(/^database_connections_max 2$/m);
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/api\/:name",status="503"\} [1-9]/m);
    expect(text).not.toMatch(/status="500"/);
    expect(run.service.logs.filter((line) => line.msg === 'not ready').length).toBeGreaterThanOrEqual(2);
    expect(run.service.logs.filter((line) => line.msg === 'request' && line.status === 500)).toEqual([]);
  });
});

describe.skipIf(postgresUrl === undefined)('the service for every way PostgreSQL can be unavailable', () => {
  const run = serviceOn(createOutageScene, {
    DB_CONNECT_TIMEOUT: '1',
    DB_STATEMENT_TIMEOUT_MS: '500',
    DB_POOL_SIZE: '2',
    PROFILE_LIMIT: '0',
    PROFILE_CACHE_SIZE: '0',
    LOG_LEVEL: 'info',
  });

  const lookUp = (requestId = 'outage-check') =>
    timedFetch(`${run.service.url}/api/demo@me`, { headers: { 'x-request-id': requestId } });
  const lookUpInGraphQL = (requestId: string) =>
    timedFetch(`${run.service.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ query: '{ profile(name: "empty@me") { name } }' }),
    });

  it.each(OUTAGE_CAUSES.map((cause, index) => ({ ...cause, index })))(
    '$name: 503 (GraphQL: SERVICE_UNAVAILABLE) with Retry-After, the cause logged once per request, then the profile again',
    async (cause) => {
      expect((await lookUp()).status).toBe(200);
      const ids = { rest: `outage-rest-${cause.index}`, graphql: `outage-graphql-${cause.index}` };
      try {
        const [rest, graphql] = await cause.provoke(run.db, () =>
          Promise.all([lookUp(ids.rest), lookUpInGraphQL(ids.graphql)]),
        );
        expect(rest.status).toBe(503);
        expect(rest.body).toEqual({ error: 'Service unavailable' });
        expect(rest.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(graphql.body).toMatchObject({
          data: { profile: null },
          errors: [{ message: 'Service unavailable', extensions: { code: 'SERVICE_UNAVAILABLE', retryAfter: 5 } }],
        });
        expect(graphql.headers.get('retry-after')).toBe('5');
      } finally {
        await cause.clear(run.db);
      }
      for (const requestId of [ids.rest, ids.graphql]) {
        const isCause = (line: LogLine) => line.msg === 'database unavailable' && line.requestId === requestId;
        await run.service.waitForLog(isCause, 5000);
        // And no second one: the answer is complete, and its request line follows the cause's.
        await run.service.waitForLog((line) => line.msg === 'request' && line.requestId === requestId, 5000);
        const causes = run.service.logs.filter(isCause);
        expect(causes, requestId).toHaveLength(1);
        expect(causes[0]?.level).toBe(40);
        expect(String(causes[0]?.reason).length).toBeGreaterThan(0);
      }
      await eventually(async () => (await lookUp()).status === 200, {
        what: 'the profile again',
        withinMs: RECOVERY_BOUND_MS,
      });
    },
    60_000,
  );

  it('logged no 500 for any of them', () => {
    expect(run.service.logs.filter((line) => line.msg === 'request' && line.status === 500)).toEqual([]);
  });
});

describe.skipIf(postgresUrl === undefined)('the service on a slow link', () => {
  // The default timeouts (connect 5 s, statement 5 s), and a read deadline of 20 s: the default
  // of 2 s is too short for a link this slow (docs/database-outages.md), and a lookup may wait
  // for a connection that a background statement holds for a round trip (the webhooks' look for
  // endpoints, the change log's retention).
  const run = serviceOn(
    createProxiedDemoDatabase,
    { DB_READ_TIMEOUT_MS: '20000', DB_POOL_SIZE: '4', PROFILE_LIMIT: '0', PROFILE_CACHE_SIZE: '0' },
    (db) => db.proxy.setLatency(0),
  );

  it('answers a burst of lookups over 1.5 s of latency each way with 200s, slowly', async () => {
    run.db.proxy.setLatency(1500);
    const burst = (size: number) =>
      Promise.all(Array.from({ length: size }, () => timedFetch(`${run.service.url}/api/demo@me`, {}, 30_000)));
    // New connections (a start-up and the statement's two round trips: about 9 s), then more
    // lookups at once than there are connections.
    for (const size of [4, 12]) {
      const answers = await burst(size);
      expect(answers.map((answer) => answer.status)).toEqual(Array(size).fill(200));
      expect(answers.every((answer) => (answer.body as { name?: string }).name === 'demo@me')).toBe(true);
    }
  }, 90_000);
});

describe.skipIf(postgresUrl === undefined)('the profile cache while PostgreSQL is unreachable', () => {
  const run = serviceOn(
    createProxiedDemoDatabase,
    { DB_CONNECT_TIMEOUT: '1', DB_STATEMENT_TIMEOUT_MS: '500', PROFILE_LIMIT: '0' },
    (db) => db.proxy.restore(),
  );

  it.each(['refuse', 'blackhole'] as const)(
    'answers nothing from memory later than a second after a %s outage began, and from memory again after it',
    async (mode) => {
      // The metric's line, not its help text (which says "1 while ...").
      const answering = async () =>
        /^profile_cache_answering 1$/m.test(String((await timedFetch(`${run.service.url}/metrics`)).body));
      await eventually(answering, 'the profile cache answering');
      for (let i = 0; i < 3; i += 1) expect((await timedFetch(`${run.service.url}/api/demo@me`)).status).toBe(200);
      run.db.proxy.cut(mode);
      const cutAt = Date.now();
      try {
        const answers: Array<{ sentAfterMs: number; status: number }> = [];
        while (Date.now() - cutAt < MAX_SILENCE_MS + 3000) {
          const sentAfterMs = Date.now() - cutAt;
          answers.push({
            sentAfterMs,
            status: (await timedFetch(`${run.service.url}/api/demo@me`, {}, 15_000)).status,
          });
        }
        // Until the feed has gone a second without a heartbeat the cache may answer; after that,
        // only the database could, and it cannot.
        const late = answers.filter((answer) => answer.sentAfterMs > MAX_SILENCE_MS + 250);
        expect(late.length).toBeGreaterThan(0);
        expect(late.filter((answer) => answer.status !== 503)).toEqual([]);
      } finally {
        run.db.proxy.restore();
      }
      await eventually(async () => (await timedFetch(`${run.service.url}/api/demo@me`)).status === 200, 'a 200 again');
      await eventually(answering, 'the profile cache answering');
    },
    60_000,
  );
});
