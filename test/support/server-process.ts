/**
 * The service as operators run it: `src/main.ts` in a child process, configured through the
 * environment, on a free port (PORT=0; the URL is read from the "listening" log line). Tests use
 * it for what only a real process shows: signals, exit codes, several workers, log lines.
 *
 * The child is `node --import tsx src/main.ts` (what `npx tsx src/main.ts` runs, without the
 * wrapper processes in between), so a signal sent to `pid` reaches the service itself and
 * `exited` reports the service's own exit code.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Database settings that must not leak from the test runner's environment into a child. */
export const DATABASE_VARIABLES = [
  'DATABASE_URL',
  'DATA_DIR',
  'DB_POOL_SIZE',
  'DB_CONNECT_TIMEOUT',
  'DB_STATEMENT_TIMEOUT_MS',
  'DB_READ_TIMEOUT_MS',
];

/** Service settings that must not leak from the test runner's environment into the child. */
const SERVICE_VARIABLES = [
  ...DATABASE_VARIABLES,
  'PORT',
  'HOST',
  'REDIS_URL',
  'WORKERS',
  'LOG_LEVEL',
  'TRUST_PROXY_HOPS',
  'OWNER_CHECK_LIMIT',
  'PROFILE_LIMIT',
  'CACHE_MAX_AGE',
  'SHUTDOWN_TIMEOUT_MS',
  'RATE_LIMIT_PREFIX',
  'DATABASE_REPLICA_URLS',
  'DATABASE_LISTEN_URL',
  'DATABASE_POOL_MODE',
  'REPLICA_MAX_LAG_MS',
  'CACHE_PURGE_URLS',
  'CACHE_SHARED_MAX_AGE',
];

/** The V8 flags `npm start` passes to the service: package.json's `config.nodeFlags`. */
export function startFlags(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    config?: { nodeFlags?: string };
  };
  return (manifest.config?.nodeFlags ?? '').split(/\s+/).filter((flag) => flag !== '');
}

export interface LogLine {
  level: number;
  msg: string;
  pid: number;
  time: number;
  [field: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A service process that may or may not have started listening. */
export interface SpawnedProcess {
  /** The service's process (the cluster primary with WORKERS > 1), or the `command`'s. */
  pid: number;
  /** Every JSON log line so far, in order. */
  readonly logs: readonly LogLine[];
  /** Everything written to stderr so far. */
  readonly stderr: string;
  /** Resolves with the first log line (already seen or still to come) that matches. */
  waitForLog(matches: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  signal(signal: NodeJS.Signals): void;
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves with how it exited. */
  stop(timeoutMs?: number): Promise<Exit>;
}

export interface ServerProcess extends SpawnedProcess {
  /** Base URL, e.g. http://127.0.0.1:40123 */
  url: string;
}

export interface StartOptions {
  /** Service variables (DATABASE_URL, WORKERS, ...); PORT=0 and HOST=127.0.0.1 unless given. */
  env?: Record<string, string>;
  /** How long start-up may take until the first "listening" line. */
  startTimeoutMs?: number;
  /** The entry point, relative to the project root (the benchmark's baseline server uses it). */
  script?: string;
  /** A whole command line instead of `node --import tsx <script>` (the `npm start` test). */
  command?: readonly [string, ...string[]];
}

const running = new Set<ChildProcess>();
// A test runner that dies must not leave services behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts the service and resolves once it listens; rejects with its output if it does not. */
export async function startServerProcess(options: StartOptions = {}): Promise<ServerProcess> {
  const service = spawnServerProcess(options);
  let listening: LogLine;
  try {
    listening = await service.waitForLog((line) => line.msg === 'listening', options.startTimeoutMs ?? 30_000);
  } catch (error) {
    service.signal('SIGKILL');
    throw error;
  }
  return Object.assign(service, { url: String(listening.url) });
}

/** Starts the service without waiting for it (tests of start-up failures). */
export function spawnServerProcess(options: StartOptions = {}): SpawnedProcess {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete env[name];
  Object.assign(env, { PORT: '0', HOST: '127.0.0.1', ...options.env });

  const [command, ...args] = options.command ?? [
    process.execPath,
    '--import',
    'tsx',
    options.script ?? path.join('src', 'main.ts'),
  ];
  const child = spawn(command, args, {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);

  const logs: LogLine[] = [];
  const waiters = new Set<{ matches: (line: LogLine) => boolean; resolve: (line: LogLine) => void }>();
  let stderr = '';
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const text of lines) {
      if (text.trim() === '') continue;
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        stderr += `[stdout, not JSON] ${text}\n`;
        continue;
      }
      logs.push(line);
      for (const waiter of waiters) {
        if (waiter.matches(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });

  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });

  const describe = () =>
    `exit: ${child.exitCode ?? child.signalCode ?? 'running'}\nstderr:\n${stderr}\nlogs:\n${logs.map((l) => JSON.stringify(l)).join('\n')}`;

  const waitForLog = (matches: (line: LogLine) => boolean, timeoutMs = 15_000): Promise<LogLine> => {
    const seen = logs.find(matches);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<LogLine>((resolve, reject) => {
      const waiter = {
        matches,
        resolve: (line: LogLine) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`no matching log line within ${timeoutMs} ms\n${describe()}`));
      }, timeoutMs);
      waiters.add(waiter);
      void exited.then(() => {
        if (!waiters.has(waiter)) return;
        waiters.delete(waiter);
        clearTimeout(timer);
        reject(new Error(`the service exited before a matching log line\n${describe()}`));
      });
    });
  };

  return {
    pid: child.pid!,
    logs,
    get stderr() {
      return stderr;
    },
    waitForLog,
    signal(signal) {
      child.kill(signal);
    },
    exited,
    async stop(timeoutMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };
}
