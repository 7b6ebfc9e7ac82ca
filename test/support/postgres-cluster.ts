/**
 * PostgreSQL servers of the test's own: a primary, streaming hot standbys and PgBouncers in front
 * of either, each on a free loopback port with its files in a temporary folder. Tests stop,
 * kill and restart them at will; the shared PostgreSQL (TEST_DATABASE_URL) is never touched.
 *
 * PostgreSQL refuses to run as root, and PgBouncer too, so when the tests run as root every
 * binary runs as the `postgres` OS user and the folders are given to it. Data is thrown away,
 * so the servers run without fsync; `close()` stops them by PID and removes their folders.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  accessSync,
  chownSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { eventually } from './eventually.js';
import { isStillRunning, processTree } from './process-tree.js';
import { freePort } from './throwaway-redis.js';

const POSTGRES_BIN_DIR = process.env.POSTGRES_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const POSTGRES_TOOLS = ['initdb', 'postgres', 'pg_basebackup'] as const;
/** The database every server here holds, and the superuser the URLs name. */
const DATABASE = 'nps';
const SUPERUSER = 'postgres';
/** Connections of this helper carry this name, so that `activity()` can leave them out. */
const HELPER_APPLICATION = 'postgres-cluster helper';
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

const execFileAsync = promisify(execFile);

/** Why the cluster tests cannot run here, or undefined when they can. */
export function clusterToolsMissing(): string | undefined {
  const missing = POSTGRES_TOOLS.map((tool) => path.join(POSTGRES_BIN_DIR, tool)).filter((file) => !isExecutable(file));
  if (pgbouncerPath() === undefined) missing.push('pgbouncer (Debian package pgbouncer)');
  if (missing.length > 0) return `missing ${missing.join(', ')}`;
  if (isRoot() && osUser('postgres') === undefined)
    return 'running as root without a `postgres` OS user to run PostgreSQL as';
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Public shapes

export interface SqlTarget {
  url: string;
}

/** A server process a test starts, stops and kills. */
interface ServerProcessControls {
  /** The server's PID (the postmaster's), undefined while stopped. */
  readonly pid: number | undefined;
  /** The server and every process under it (backends, WAL sender/receiver, ...). */
  pids(): number[];
  /** Everything the server logged so far (all starts). */
  log(): string;
  /** Starts it again on the same port and folder; resolves once it accepts connections. */
  start(): Promise<void>;
  /**
   * Shutdown by its stop signal, as an operator's or an outage's: sessions are cut. PostgreSQL's is
   * the fast shutdown (SIGINT).
   */
  stop(): Promise<void>;
  /** SIGKILL to the server and all its processes at once, as in a crash of the machine. */
  kill(): Promise<void>;
}

interface PostgresServer extends SqlTarget, ServerProcessControls {
  readonly role: 'primary' | 'standby';
  readonly port: number;
  readonly database: string;
  /** The server's temporary folder: data directory, socket directory and log. */
  readonly folder: string;
}

export interface Primary extends PostgresServer {
  readonly role: 'primary';
  /** The LSN after everything written so far (committed asynchronously or not). */
  walLsn(): Promise<string>;
}

export interface Standby extends PostgresServer {
  readonly role: 'standby';
  readonly primary: Primary;
  /** The replication slot on the primary that keeps the WAL this standby still needs. */
  readonly slot: string;
  /** `pg_last_wal_replay_lsn()`. */
  replayLsn(): Promise<string>;
  /** Pauses WAL replay and resolves once it is paused (reads then see a frozen snapshot). */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Resolves once the standby has replayed up to `lsn`, by default the primary's current LSN. */
  waitForReplay(lsn?: string, timeoutMs?: number): Promise<void>;
}

type PoolMode = 'session' | 'transaction' | 'statement';

export interface PgBouncer extends SqlTarget {
  readonly port: number;
  readonly folder: string;
  readonly pid: number | undefined;
  /**
   * The admin console (`show pools`, `show clients` ...). It speaks the simple query protocol
   * only, which is what `sqlOn` sends for a statement without parameters.
   */
  readonly adminUrl: string;
  log(): string;
  start(): Promise<void>;
  /** Immediate shutdown (SIGTERM): client connections are cut. */
  stop(): Promise<void>;
}

interface PrimaryOptions {
  /** postgresql.conf settings on top of (and overriding) this helper's. */
  settings?: Record<string, string | number>;
}

interface PgBouncerOptions {
  poolMode: PoolMode;
  maxClientConn?: number;
  defaultPoolSize?: number;
  /** pgbouncer.ini settings on top of (and overriding) this helper's, e.g. ignore_startup_parameters. */
  settings?: Record<string, string | number>;
}

export interface PostgresCluster {
  startPrimary(options?: PrimaryOptions): Promise<Primary>;
  startStandby(primary: Primary): Promise<Standby>;
  startPgBouncer(target: Pick<PostgresServer, 'port' | 'database'>, options: PgBouncerOptions): Promise<PgBouncer>;
  /** PIDs of the postmasters and PgBouncers running now. */
  pids(): number[];
  /** Every temporary folder made so far (removed by `close`). */
  folders(): string[];
  /** Stops everything started (by PID) and removes its folders; safe to call twice. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// The cluster

/** A scope for servers: whatever it starts, its `close()` stops and removes. */
export function postgresCluster(): PostgresCluster {
  let ownerFound: { owner: OsUser | undefined } | undefined;
  // Looked up on first use: a skipped suite still creates its cluster while being collected.
  const serverUser = () => {
    ownerFound ??= { owner: serverOwner() };
    return ownerFound.owner;
  };
  const primaries: ManagedProcess[] = [];
  const standbys: ManagedProcess[] = [];
  const bouncers: ManagedProcess[] = [];
  const madeFolders: string[] = [];
  let standbyCount = 0;
  let closed = false;

  // A start still under way when close() runs (a hook that timed out) must not leave a server.
  const assertOpen = () => {
    if (closed) throw new Error('this postgres cluster is closed');
  };
  const folder = (prefix: string) => {
    assertOpen();
    const owner = serverUser();
    const made = mkdtempSync(path.join(os.tmpdir(), `nps-${prefix}-`));
    madeFolders.push(made);
    temporaryFolders.add(made);
    if (owner !== undefined) chownSync(made, owner.uid, owner.gid);
    return made;
  };

  return {
    async startPrimary(options = {}) {
      const owner = serverUser();
      const made = folder('pg-primary');
      const port = await freePort();
      const dataDir = path.join(made, 'data');
      await runAs(owner, made, path.join(POSTGRES_BIN_DIR, 'initdb'), [
        ...['-D', dataDir, '-U', SUPERUSER, '-A', 'trust', '-E', 'UTF8', '--locale=C'],
        // Thrown away after the test: nothing to sync to disk.
        ...['--no-sync', '--no-instructions'],
      ]);
      writeFileSync(path.join(dataDir, 'pg_hba.conf'), HBA);
      writeFileSync(path.join(dataDir, 'postgresql.conf'), settingsFile({ ...PRIMARY_SETTINGS, ...options.settings }), {
        flag: 'a',
      });
      const daemon = postmaster(owner, made, port, 'accept connections');
      assertOpen();
      primaries.push(daemon);
      await daemon.start();
      await sqlOn({ url: serverUrl(port, 'postgres') }, `create database ${DATABASE}`);
      return primaryServer(daemon, made, port);
    },

    async startStandby(primary) {
      const owner = serverUser();
      const made = folder('pg-standby');
      const port = await freePort();
      standbyCount += 1;
      const slot = `standby_${port}_${standbyCount}`;
      await runAs(owner, made, path.join(POSTGRES_BIN_DIR, 'pg_basebackup'), [
        ...['-h', '127.0.0.1', '-p', String(primary.port), '-U', SUPERUSER, '-D', path.join(made, 'data')],
        // -R writes primary_conninfo and the slot into the copy; the slot keeps every WAL segment
        // the standby has not received, however long it is stopped.
        ...['-R', '-X', 'stream', '-C', '-S', slot],
        ...['--checkpoint=fast', '--no-sync', '--no-manifest'],
      ]);
      const daemon = postmaster(owner, made, port, 'accept read-only connections');
      assertOpen();
      standbys.push(daemon);
      await daemon.start();
      return standbyServer(daemon, made, port, primary, slot);
    },

    async startPgBouncer(target, options) {
      const owner = serverUser();
      const made = folder('pgbouncer');
      const port = await freePort();
      const authFile = path.join(made, 'users.txt');
      const configFile = path.join(made, 'pgbouncer.ini');
      writeFileSync(authFile, `"${SUPERUSER}" ""\n`);
      writeFileSync(configFile, pgbouncerConfig(made, port, authFile, target.port, options));
      if (owner !== undefined) {
        chownSync(authFile, owner.uid, owner.gid);
        chownSync(configFile, owner.uid, owner.gid);
      }
      const daemon = managedProcess({
        name: `pgbouncer on ${port}`,
        owner,
        command: pgbouncerPath() ?? 'pgbouncer',
        args: [configFile],
        folder: made,
        ready: /LOG process up: PgBouncer/,
        stopSignal: 'SIGTERM',
        closeSignal: 'SIGTERM',
      });
      assertOpen();
      bouncers.push(daemon);
      await daemon.start();
      return {
        url: serverUrl(port, target.database),
        adminUrl: serverUrl(port, 'pgbouncer'),
        port,
        folder: made,
        get pid() {
          return daemon.pid;
        },
        log: daemon.log,
        start: daemon.start,
        stop: daemon.stop,
      };
    },

    pids() {
      return [...bouncers, ...standbys, ...primaries].flatMap((p) => (p.pid === undefined ? [] : [p.pid]));
    },

    folders: () => [...madeFolders],

    async close() {
      closed = true;
      const failures: unknown[] = [];
      // Clients first, then the standbys, so that no WAL receiver is left asking a stopped primary.
      for (const group of [bouncers, standbys, primaries]) {
        const results = await Promise.allSettled(group.map((p) => p.close()));
        for (const result of results) if (result.status === 'rejected') failures.push(result.reason);
      }
      for (const made of madeFolders) {
        rmSync(made, { recursive: true, force: true });
        temporaryFolders.delete(made);
      }
      if (failures.length > 0) throw new AggregateError(failures, 'some cluster processes did not stop');
    },
  };
}

function primaryServer(daemon: ManagedProcess, folder: string, port: number): Primary {
  // Object.assign, not a spread: a spread would copy `pid` once instead of keeping its getter.
  return Object.assign(serverBase(daemon, folder, port), {
    role: 'primary' as const,
    async walLsn() {
      // pg_current_wal_lsn() is the *write* position: with synchronous_commit=off it stays behind
      // a commit that the WAL writer has not written yet, and waiting for it could miss that commit.
      const [row] = await sqlOn<{ lsn: string }>(
        { url: serverUrl(port) },
        'select pg_current_wal_insert_lsn()::text as lsn',
      );
      return row!.lsn;
    },
  });
}

function standbyServer(daemon: ManagedProcess, folder: string, port: number, primary: Primary, slot: string): Standby {
  const target = { url: serverUrl(port) };
  return Object.assign(serverBase(daemon, folder, port), {
    role: 'standby' as const,
    primary,
    slot,
    async replayLsn() {
      const [row] = await sqlOn<{ lsn: string }>(target, 'select pg_last_wal_replay_lsn()::text as lsn');
      return row!.lsn;
    },
    async pauseReplay() {
      await sqlOn(target, 'select pg_wal_replay_pause()');
      // The request is only a request; replay stops at its next record.
      await pollSql(target, `select pg_get_wal_replay_pause_state() = 'paused' as done`, [], 10_000, () =>
        Promise.resolve(`replay on the standby on ${port} did not pause`),
      );
    },
    async resumeReplay() {
      await sqlOn(target, 'select pg_wal_replay_resume()');
    },
    async waitForReplay(lsn?: string, timeoutMs = 15_000) {
      const wanted = lsn ?? (await primary.walLsn());
      await pollSql(
        target,
        'select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false) as done',
        [wanted],
        timeoutMs,
        async () => {
          const [state] = await sqlOn<{ replayed: string | null; pause: string }>(
            target,
            'select pg_last_wal_replay_lsn()::text as replayed, pg_get_wal_replay_pause_state() as pause',
          );
          return `the standby on ${port} replayed up to ${state?.replayed}, not ${wanted}, within ${timeoutMs} ms (replay: ${state?.pause})`;
        },
      );
    },
  });
}

function serverBase(daemon: ManagedProcess, folder: string, port: number) {
  return {
    url: serverUrl(port),
    port,
    database: DATABASE,
    folder,
    get pid() {
      return daemon.pid;
    },
    pids: daemon.pids,
    log: daemon.log,
    start: daemon.start,
    stop: daemon.stop,
    kill: daemon.kill,
  };
}

// ---------------------------------------------------------------------------------------------
// Queries on a server

/**
 * Runs SQL on its own short-lived connection: unnamed statements, so that it works through
 * PgBouncer too, and without parameters the simple query protocol (several statements at once).
 */
export async function sqlOn<Row extends object = Record<string, unknown>>(
  target: SqlTarget,
  text: string,
  params: readonly (string | number | boolean | null)[] = [],
): Promise<Row[]> {
  const client = connect(target);
  try {
    // A plain array: postgres.js's result is an Array subclass with more properties.
    return [...((await client.unsafe(text, [...params])) as unknown as Row[])];
  } finally {
    await client.end({ timeout: 2 });
  }
}

export interface Activity {
  pid: number;
  applicationName: string;
  database: string | null;
  user: string | null;
  backendType: string;
  state: string | null;
  /** The running statement, or the last one of an idle session. */
  query: string;
}

/** The server's client sessions as pg_stat_activity shows them, without this helper's own. */
export async function activity(server: SqlTarget): Promise<Activity[]> {
  return sqlOn<Activity>(
    server,
    `select pid, application_name as "applicationName", datname as database, usename as "user",
            backend_type as "backendType", state, query
       from pg_stat_activity
      where backend_type = 'client backend' and pid <> pg_backend_pid() and application_name <> $1
      order by pid`,
    [HELPER_APPLICATION],
  );
}

export interface AdvisoryLock {
  pid: number;
  applicationName: string | null;
  /** The key of a one-key lock (`pg_advisory_lock(bigint)`); undefined for a two-key lock. */
  key: bigint | undefined;
  /** The two keys of a `pg_advisory_lock(int, int)` lock. */
  keys: [number, number] | undefined;
  mode: string;
  granted: boolean;
}

/** Advisory locks held or awaited on the server (pg_locks), with the session's application_name. */
export async function advisoryLocks(server: SqlTarget): Promise<AdvisoryLock[]> {
  const rows = await sqlOn<{
    pid: number;
    applicationName: string | null;
    classid: string;
    objid: string;
    objsubid: number;
    mode: string;
    granted: boolean;
  }>(
    server,
    `select l.pid, a.application_name as "applicationName", l.classid::text, l.objid::text, l.objsubid,
            l.mode, l.granted
       from pg_locks l left join pg_stat_activity a using (pid)
      where l.locktype = 'advisory'
      order by l.pid`,
  );
  return rows.map((row) => {
    // Keys are stored as unsigned 32-bit oids: a one-key lock as its high and low halves
    // (objsubid 1), a two-key lock as its two int4 keys (objsubid 2).
    const high = BigInt(row.classid);
    const low = BigInt(row.objid);
    return {
      pid: row.pid,
      applicationName: row.applicationName,
      key: row.objsubid === 1 ? BigInt.asIntN(64, (high << 32n) | low) : undefined,
      keys: row.objsubid === 2 ? [Number(BigInt.asIntN(32, high)), Number(BigInt.asIntN(32, low))] : undefined,
      mode: row.mode,
      granted: row.granted,
    };
  });
}

/** An LSN ('16/B374D848') as a number of bytes, to compare LSNs or measure lag. */
export function parseLsn(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  if (high === undefined || low === undefined) throw new Error(`not an LSN: ${lsn}`);
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

function connect(target: SqlTarget) {
  return postgres(target.url, {
    max: 1,
    prepare: false,
    // Fetching the array types takes a statement of the extended protocol, which PgBouncer's
    // admin console refuses, and a round trip the helper's one-off connections do not need.
    fetch_types: false,
    connect_timeout: 5,
    onnotice: () => {},
    connection: { application_name: HELPER_APPLICATION },
  });
}

/**
 * `eventually` on `text` (one row with a boolean `done`), on one connection for all the checks;
 * a failure says what `describeFailure` finds then (where replay stands, say).
 */
async function pollSql(
  target: SqlTarget,
  text: string,
  params: readonly string[],
  timeoutMs: number,
  describeFailure: () => Promise<string>,
): Promise<void> {
  const client = connect(target);
  try {
    const done = async () => {
      const [row] = (await client.unsafe(text, [...params])) as unknown as { done: boolean }[];
      return row?.done === true;
    };
    await eventually(done, { what: text, withinMs: timeoutMs, everyMs: 10 }).catch(async (error: unknown) => {
      throw new Error(`${await describeFailure()} (${(error as Error).message})`);
    });
  } finally {
    await client.end({ timeout: 2 });
  }
}

function serverUrl(port: number, database = DATABASE): string {
  return `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`;
}

// ---------------------------------------------------------------------------------------------
// Configuration

const HBA = [
  "# Trust, but only on this server's socket folder and 127.0.0.1.",
  'local all all trust',
  'host all all 127.0.0.1/32 trust',
  'local replication all trust',
  'host replication all 127.0.0.1/32 trust',
  '',
].join('\n');

/** Appended to initdb's postgresql.conf; pg_basebackup copies them to the standbys. */
const PRIMARY_SETTINGS: Record<string, string | number> = {
  listen_addresses: '127.0.0.1',
  shared_buffers: '16MB',
  max_connections: 100,
  wal_level: 'replica',
  max_wal_senders: 10,
  max_replication_slots: 10,
  hot_standby: 'on',
  // Throwaway servers: durability buys nothing, and the machine's two cores are shared.
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  // With synchronous_commit=off a commit reaches the standbys only once the WAL writer writes
  // it, by default up to 600 ms later; lag-sensitive tests need it within milliseconds.
  wal_writer_delay: '10ms',
  log_line_prefix: '%m [%p] %a: ',
};

function settingsFile(settings: Record<string, string | number>): string {
  const lines = Object.entries(settings).map(([name, value]) => `${name} = ${quoteSetting(value)}`);
  return `\n# postgres-cluster test helper\n${lines.join('\n')}\n`;
}

function quoteSetting(value: string | number): string {
  if (typeof value === 'number') return String(value);
  return `'${value.replaceAll("'", "''")}'`;
}

function pgbouncerConfig(
  folder: string,
  port: number,
  authFile: string,
  targetPort: number,
  options: PgBouncerOptions,
) {
  // ignore_startup_parameters stays at its default (none), as on a stock PgBouncer: a client
  // sending statement_timeout, jit, options ... at start-up is refused, as in production.
  const settings: Record<string, string | number> = {
    listen_addr: '127.0.0.1',
    listen_port: port,
    unix_socket_dir: folder,
    auth_type: 'trust',
    auth_file: authFile,
    admin_users: SUPERUSER,
    pool_mode: options.poolMode,
    max_client_conn: options.maxClientConn ?? 200,
    default_pool_size: options.defaultPoolSize ?? 10,
    ...options.settings,
  };
  const lines = Object.entries(settings).map(([name, value]) => `${name} = ${value}`);
  // Every database name goes to the same name on the target.
  return `[databases]\n* = host=127.0.0.1 port=${targetPort}\n\n[pgbouncer]\n${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Processes

interface OsUser {
  uid: number;
  gid: number;
}

interface ManagedProcess extends ServerProcessControls {
  /** The quickest clean end for a throwaway server, escalating to SIGKILL. */
  close(): Promise<void>;
}

interface ProcessSpec {
  name: string;
  owner: OsUser | undefined;
  command: string;
  args: string[];
  folder: string;
  /** A log line that says the process is ready, looked for in what this start logged. */
  ready: RegExp;
  stopSignal: NodeJS.Signals;
  closeSignal: NodeJS.Signals;
}

/** Children still running and folders still there, for a test process that exits without close(). */
const runningChildren = new Set<ChildProcess>();
const temporaryFolders = new Set<string>();
process.once('exit', () => {
  // Only synchronous work runs here: SIGKILL to every process of each tree, so that nothing
  // writes into a folder while it is removed.
  for (const child of runningChildren) {
    for (const entry of processTree(child.pid!)) killQuietly(entry.pid);
  }
  for (const folder of temporaryFolders) {
    try {
      rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Best effort: the process is exiting anyway.
    }
  }
});

function postmaster(owner: OsUser | undefined, folder: string, port: number, readyText: string): ManagedProcess {
  return managedProcess({
    name: `PostgreSQL on ${port}`,
    owner,
    command: path.join(POSTGRES_BIN_DIR, 'postgres'),
    args: ['-D', path.join(folder, 'data'), '-c', `port=${port}`, '-c', `unix_socket_directories=${folder}`],
    folder,
    ready: new RegExp(`database system is ready to ${readyText}`),
    // Fast shutdown for stop(); immediate shutdown (no checkpoint) when the files go anyway.
    stopSignal: 'SIGINT',
    closeSignal: 'SIGQUIT',
  });
}

function managedProcess(spec: ProcessSpec): ManagedProcess {
  const logFile = path.join(spec.folder, 'server.log');
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const readLog = (from = 0) => {
    try {
      return readFileSync(logFile).subarray(from).toString('utf8');
    } catch {
      return '';
    }
  };
  const logSize = () => {
    try {
      return statSync(logFile).size;
    } catch {
      return 0;
    }
  };

  const signalAndWait = async (signal: NodeJS.Signals) => {
    if (!running()) return;
    const waited = exited;
    child!.kill(signal);
    const timer = setTimeout(() => void killTree(), STOP_TIMEOUT_MS);
    await waited;
    clearTimeout(timer);
  };

  const killTree = async () => {
    if (!running()) return;
    const tree = processTree(child!.pid!);
    const waited = exited;
    for (const entry of tree) if (isStillRunning(entry)) killQuietly(entry.pid);
    await waited;
    // The postmaster's children notice its death on their own, but not at once.
    await eventually(() => !tree.some(isStillRunning), {
      what: `${spec.name}'s processes gone`,
      withinMs: STOP_TIMEOUT_MS,
      everyMs: 10,
    });
  };

  return {
    get pid() {
      return running() ? child!.pid : undefined;
    },
    pids: () => (running() ? processTree(child!.pid!).map((entry) => entry.pid) : []),
    log: () => readLog(),
    async start() {
      if (running()) throw new Error(`${spec.name} is already running`);
      const logStart = logSize();
      const fd = openSync(logFile, 'a');
      let started: ChildProcess;
      try {
        started = spawn(spec.command, spec.args, {
          cwd: spec.folder,
          env: childEnv(spec.folder),
          stdio: ['ignore', fd, fd],
          ...spec.owner,
        });
      } finally {
        closeSync(fd);
      }
      child = started;
      runningChildren.add(started);
      exited = new Promise<void>((resolve) => {
        started.once('exit', () => {
          runningChildren.delete(started);
          resolve();
        });
        started.once('error', () => resolve());
      });
      // A test worker must not stay alive for a server whose test forgot to close it.
      started.unref();
      const readyOrExited = () => {
        if (spec.ready.test(readLog(logStart))) return 'ready';
        const exited = started.exitCode !== null || started.signalCode !== null || started.pid === undefined;
        return exited && 'exited';
      };
      const outcome = await eventually(readyOrExited, {
        what: `${spec.name} ready`,
        withinMs: READY_TIMEOUT_MS,
        everyMs: 15,
      }).catch(async (error: unknown) => {
        await killTree();
        throw new Error(`${(error as Error).message}:\n${readLog(logStart)}`);
      });
      if (outcome === 'exited') throw new Error(`${spec.name} exited while starting:\n${readLog(logStart)}`);
    },
    stop: () => signalAndWait(spec.stopSignal),
    kill: killTree,
    close: () => signalAndWait(spec.closeSignal),
  };
}

/** Runs a command to completion as `owner`; rejects with its output when it fails. */
async function runAs(owner: OsUser | undefined, folder: string, command: string, args: string[]): Promise<void> {
  try {
    await execFileAsync(command, args, { cwd: folder, env: childEnv(folder), ...owner });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${path.basename(command)} failed: ${failed.message}\n${failed.stdout ?? ''}${failed.stderr ?? ''}`,
    );
  }
}

/**
 * The test runner's PG* variables must not steer the servers' own tools (pg_basebackup), and
 * HOME is the server's folder: pg_basebackup -R names HOME/.pgpass in the standby's settings.
 */
function childEnv(home: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C', LC_ALL: 'C', TZ: 'UTC' };
}

/** Who runs the servers: the `postgres` OS user when the tests run as root, else the tests' user. */
function serverOwner(): OsUser | undefined {
  if (!isRoot()) return undefined;
  const owner = osUser('postgres');
  if (owner === undefined) throw new Error('PostgreSQL cannot run as root and there is no `postgres` OS user');
  return owner;
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function osUser(name: string): OsUser | undefined {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${name}:`));
  const [, , uid, gid] = line?.split(':') ?? [];
  return uid === undefined || gid === undefined ? undefined : { uid: Number(uid), gid: Number(gid) };
}

function pgbouncerPath(): string | undefined {
  // Debian installs it in /usr/sbin, which is not on every user's PATH.
  const folders = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/sbin'];
  return folders.map((folder) => path.join(folder, 'pgbouncer')).find(isExecutable);
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILL to a process that may have exited since it was seen. */
function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
