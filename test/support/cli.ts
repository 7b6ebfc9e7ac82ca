/**
 * The data commands as operators run them: `node --import tsx src/cli/<command>.ts` in a child
 * process (what `npm run <command>` runs, without npm's wrapper processes, so a signal reaches
 * the command itself), with the database settings given and none leaking in from the runner.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { DATABASE_VARIABLES, PROJECT_ROOT } from './server-process.js';

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  readonly child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves once stderr matches `pattern` (rejects when the command ends first or after `timeoutMs`). */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<void>;
  readonly done: Promise<CliResult>;
}

export interface CliOptions {
  env?: Record<string, string>;
  /** Written to the command's standard input, which is then closed. */
  input?: string | Buffer;
  /** Leave standard output to the caller (child.stdout) instead of collecting it. */
  rawStdout?: boolean;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export function startCli(command: string, args: readonly string[], options: CliOptions = {}): RunningCli {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of DATABASE_VARIABLES) delete env[name];
  Object.assign(env, options.env);
  const child = spawn(process.execPath, ['--import', 'tsx', `src/cli/${command}.ts`, ...args], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  const watchers = new Set<() => void>();
  if (!options.rawStdout) child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const watcher of watchers) watcher();
  });
  child.stdin?.on('error', () => {}); // a command that exits before reading all of it
  child.stdin?.end(options.input);
  const done = new Promise<CliResult>((resolve) => {
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    waitForStderr(pattern, timeoutMs = 60_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!pattern.test(stderr)) return;
          finish();
          resolve();
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`stderr did not match ${pattern} within ${timeoutMs} ms:\n${stderr}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          watchers.delete(check);
        };
        watchers.add(check);
        void done.then(() => {
          if (!watchers.has(check)) return;
          finish();
          reject(new Error(`the command ended before stderr matched ${pattern}:\n${stderr}`));
        });
        check();
      });
    },
    done,
  };
}

/** Runs a command to its end. */
export function runCli(command: string, args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(command, args, options).done;
}

/** A stack trace line, as Node prints one for an uncaught exception. */
export const STACK_LINE = /^\s+at /m;
