/**
 * Every way PostgreSQL can be unavailable, produced on demand, for tests of the data layer and
 * of the HTTP service alike.
 *
 * An OutageScene is the suite's own PostgreSQL database (with the demo data) behind two stand-ins
 * the test controls: client → fake PostgreSQL (test/support/fake-postgres.ts) → TCP proxy
 * (test/support/tcp-proxy.ts) → PostgreSQL. The fake answers new sessions with the server's
 * refusals; the proxy cuts and black-holes connections that are already open; the real server
 * terminates backends, refuses connections to the suite's database (ALTER DATABASE ...
 * ALLOW_CONNECTIONS false, on that database only) and times statements out. The shared server is
 * never stopped or reconfigured.
 *
 * Each OutageCause makes one read fail (`provoke`) and goes away again (`clear`). The read is any
 * function that asks the database for a profile: a guarded Drizzle query or an HTTP request.
 */
import postgres from 'postgres';
import { eventually } from './eventually.js';
import { type FakePostgres, STARTUP_ERRORS, startFakePostgres } from './fake-postgres.js';
import { createProxiedDemoDatabase, type ProxiedDatabase } from './proxied-database.js';

export interface OutageScene extends ProxiedDatabase {
  fake: FakePostgres;
  /** The database's name on the server. */
  databaseName: string;
  /**
   * Resolves once the client under test has let go of its connections (after a reset or a
   * termination), so that its next read needs a new session; rejects, naming them, when some
   * stay open. Tests may replace it with a check that sees the client itself; the default watches
   * the fake's side.
   */
  clientLetGo: () => Promise<void>;
}

/** A connection to the server's maintenance database (TEST_DATABASE_URL), as a DBA's session. */
function adminSession(): postgres.Sql {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  return postgres(url, { max: 1, onnotice: () => {} });
}

export async function createOutageScene(): Promise<OutageScene> {
  const proxied = await createProxiedDemoDatabase();
  const fake = await startFakePostgres({ host: proxied.proxy.host, port: proxied.proxy.port });
  const databaseName = new URL(proxied.database.url!).pathname.slice(1);
  const scene: OutageScene = {
    ...proxied,
    fake,
    databaseName,
    url: fake.urlThrough(proxied.url),
    async clientLetGo() {
      // Every connection it had is gone. Not "none open": a client that reconnects at once holds
      // new ones (refused, or not yet), and a pool, the LISTEN session and the key store
      // reconnecting side by side on a busy machine were seen never to be at none for 10 s.
      // A connection that stays open is a defect of the client, and fails the test with what each
      // one saw: one was the postgres.js connection that never sent its next startup message
      // (test/postgres-reconnect.test.ts), open through the fake with nothing to say.
      const had = fake.openNow();
      const stillOpen = () => {
        const now = fake.openNow();
        return [...had].filter((connection) => now.has(connection));
      };
      try {
        await eventually(() => stillOpen().length === 0, 'the client let go of its connections');
      } catch (error) {
        const stayed = stillOpen();
        const histories = stayed.map((connection) => fake.describe(connection)).join('; ');
        throw new Error(`${String(error)}: ${stayed.length} of ${had.size} still open: ${histories}`);
      }
    },
    async close() {
      await fake.close();
      await proxied.close();
    },
  };
  return scene;
}

export interface OutageCause {
  name: string;
  /** A code the failure carries in its cause chain when the read is a Drizzle query. */
  code: string;
  /** Starts the cause, and runs `read` while it holds; resolves or rejects as the read does. */
  provoke<T>(scene: OutageScene, read: () => Promise<T>): Promise<T>;
  /** Ends the cause (the database is reachable again). */
  clear(scene: OutageScene): Promise<void>;
}

/** A cause that holds from `start` to `clear`: the read runs after the client let go. */
function lasting(
  name: string,
  code: string,
  start: (scene: OutageScene) => Promise<void>,
  clear: (scene: OutageScene) => Promise<void>,
): OutageCause {
  return {
    name,
    code,
    async provoke(scene, read) {
      await start(scene);
      return read();
    },
    clear,
  };
}

/** New sessions are refused by the fake in the way `behaviour` says; open ones are reset. */
function refusedSessions(name: string, code: string, behaviour: Parameters<FakePostgres['behave']>[0]): OutageCause {
  return lasting(
    name,
    code,
    async (scene) => {
      await scene.fake.behave(behaviour, { resetOpen: true });
      await scene.clientLetGo();
    },
    (scene) => scene.fake.behave({ kind: 'forward' }),
  );
}

/**
 * Runs `read` while another session holds an exclusive lock on the profiles, so it waits inside
 * PostgreSQL, and calls `act` with the waiting backends' process ids.
 */
async function whileReadWaits<T>(
  scene: OutageScene,
  read: () => Promise<T>,
  act: (waiting: number[], outcome: Promise<unknown>) => Promise<void>,
): Promise<T> {
  const admin = adminSession();
  const locker = postgres(scene.database.url!, { max: 1, onnotice: () => {} });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked: () => void = () => {};
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const holding = locker.begin(async (tx) => {
    await tx`lock table profiles in access exclusive mode`;
    locked();
    await released;
  });
  try {
    await isLocked;
    const outcome = read();
    const settled = outcome.then(
      () => undefined,
      () => undefined,
    );
    let waiting: number[] = [];
    await eventually(async () => {
      const rows = await admin<{ pid: number }[]>`
        select pid from pg_stat_activity where datname = ${scene.databaseName} and wait_event_type = 'Lock'`;
      waiting = rows.map((row) => row.pid);
      return waiting.length > 0;
    }, 'the read waiting for the lock');
    await act(waiting, settled);
    await settled;
    return await outcome;
  } finally {
    release();
    await holding.catch(() => undefined);
    await locker.end();
    await admin.end();
  }
}

async function setAllowConnections(scene: OutageScene, allow: boolean): Promise<void> {
  const admin = adminSession();
  try {
    // The identifier comes from createTestDatabase (nps_test_<hex>), never from input.
    await admin.unsafe(`alter database "${scene.databaseName}" allow_connections ${allow}`);
    if (!allow) {
      // A session whose start-up passed the check just before the change is not listed under
      // the database yet when the first sweep runs, and would live on (the client's "let go"
      // then waited in vain, now and then): sweep until five sweeps in a row find none.
      let quietSweeps = 0;
      await eventually(async () => {
        const [{ terminated } = { terminated: 0 }] = await admin<{ terminated: number }[]>`
          select count(pg_terminate_backend(pid))::int as terminated
          from pg_stat_activity where datname = ${scene.databaseName}`;
        quietSweeps = terminated === 0 ? quietSweeps + 1 : 0;
        return quietSweeps >= 5;
      }, 'the sessions of the database terminated');
    }
  } finally {
    await admin.end();
  }
}

const nothingToClear = async () => {};

/** Every cause, in the order a suite can run them one after another on one client. */
export const OUTAGE_CAUSES: readonly OutageCause[] = [
  refusedSessions('connection refused (nothing listens)', 'ECONNREFUSED', { kind: 'refuse' }),
  lasting(
    'connections reset, new ones too',
    'ECONNRESET',
    async (scene) => {
      scene.proxy.cut('refuse');
      await scene.clientLetGo();
    },
    async (scene) => scene.proxy.restore(),
  ),
  lasting(
    'open connections silent (black hole)',
    'ETIMEDOUT',
    async (scene) => scene.proxy.cut('blackhole'),
    async (scene) => scene.proxy.restore(),
  ),
  refusedSessions('server silent at connection start', 'CONNECT_TIMEOUT', { kind: 'silent' }),
  refusedSessions('server hangs up at connection start (our deadline)', 'ETIMEDOUT', { kind: 'hang-up' }),
  refusedSessions('57P03 starting up', '57P03', STARTUP_ERRORS.startingUp),
  refusedSessions('57P03 shutting down', '57P03', STARTUP_ERRORS.shuttingDown),
  refusedSessions('57P01 admin shutdown at connection start', '57P01', STARTUP_ERRORS.adminShutdown),
  refusedSessions('57P02 crash of another server process', '57P02', STARTUP_ERRORS.crashShutdown),
  refusedSessions('53300 too many clients', '53300', STARTUP_ERRORS.tooManyClients),
  {
    // PostgreSQL sends 57P01 to the terminated backend's client, but postgres.js holds a query's
    // error until ReadyForQuery, which never comes: the query fails as CONNECTION_CLOSED.
    name: 'backend terminated during the read (pg_terminate_backend)',
    code: 'CONNECTION_CLOSED',
    provoke: (scene, read) =>
      whileReadWaits(scene, read, async (waiting) => {
        const admin = adminSession();
        try {
          await admin`select pg_terminate_backend(pid) from unnest(${waiting}::int[]) as pid`;
        } finally {
          await admin.end();
        }
      }),
    clear: nothingToClear,
  },
  lasting(
    '55000 database not accepting connections (ALLOW_CONNECTIONS false, backends terminated)',
    '55000',
    async (scene) => {
      await setAllowConnections(scene, false);
      await scene.clientLetGo();
    },
    (scene) => setAllowConnections(scene, true),
  ),
  {
    name: '57014 statement timeout',
    code: '57014',
    // The read waits for the lock until the client's statement_timeout cancels it.
    provoke: (scene, read) => whileReadWaits(scene, read, async (_waiting, outcome) => void (await outcome)),
    clear: nothingToClear,
  },
];
