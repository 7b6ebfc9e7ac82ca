/**
 * The data commands as operators run them: `node --import tsx src/cli/<command>.ts` in a child
 * process (what `npm run <command>` runs, without npm's wrapper processes, so a signal reaches
 * the command itself), with the database settings given and none leaking in from the runner.
 *
 * A process costs about a second of CPU (loading tsx and the service's modules) and, on PGlite,
 * as much again to start the database; `runInProcess` runs the same command in the test process
 * instead (src/cli/command.ts, executeCommand), with the same arguments, settings, input and
 * exit code. Suites use it where a test is about what a command does, and a real process where
 * it is about the process (pipes, signals, the script npm runs): each command keeps tests of both.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { type Command, executeCommand } from '../../src/cli/command.js';
import { exportCommand } from '../../src/cli/commands/export.js';
import { genCommand } from '../../src/cli/commands/gen.js';
import { importCommand } from '../../src/cli/commands/import.js';
import { keysCommand } from '../../src/cli/commands/keys.js';
import { migrateCommand } from '../../src/cli/commands/migrate.js';
import { printSchemaCommand } from '../../src/cli/commands/print-schema.js';
import { seedCommand } from '../../src/cli/commands/seed.js';
import { webhooksCommand } from '../../src/cli/commands/webhooks.js';
import { DATABASE_VARIABLES, PROJECT_ROOT } from './server-process.js';

/** The commands, by the name of their script in src/cli/. */
const COMMANDS = {
  export: exportCommand,
  gen: genCommand,
  import: importCommand,
  keys: keysCommand,
  migrate: migrateCommand,
  'print-schema': printSchemaCommand,
  seed: seedCommand,
  webhooks: webhooksCommand,
} satisfies Record<string, Command>;

export type CommandName = keyof typeof COMMANDS;

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
  /** Written to the command's standard input, which is then closed (unless `holdInput`). */
  input?: string | Buffer;
  /** Leave standard input open after `input`, for the caller to write more and end (child.stdin). */
  holdInput?: boolean;
  /** Leave standard output to the caller (child.stdout) instead of collecting it. */
  rawStdout?: boolean;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** The runner's environment without its database settings, and `extra`. */
function commandEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of DATABASE_VARIABLES) delete env[name];
  return Object.assign(env, extra);
}

export function startCli(command: CommandName, args: readonly string[], options: CliOptions = {}): RunningCli {
  const env = commandEnv(options.env);
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
  if (!options.holdInput) child.stdin?.end(options.input);
  else if (options.input !== undefined) child.stdin?.write(options.input);
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

/** Runs a command to its end, in a process of its own. */
export function runCli(command: CommandName, args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(command, args, options).done;
}

/**
 * Runs a command to its end in the test process, as runCli would in a process of its own:
 * standard input is `options.input` (a pipe, of no known size), and the result is what the
 * process would have written and its exit code (`signal` is always null).
 */
export async function runInProcess(
  command: CommandName,
  args: readonly string[],
  options: Omit<CliOptions, 'rawStdout' | 'holdInput'> = {},
): Promise<CliResult> {
  const stdout = collector();
  const stderr = collector();
  let code = 0;
  await executeCommand(COMMANDS[command], {
    args,
    env: commandEnv(options.env),
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin: () => ({
      stream: Readable.from(options.input === undefined ? [] : [Buffer.from(options.input)]),
      size: undefined,
    }),
    setExitCode: (value) => {
      code = value;
    },
  });
  return { code, signal: null, stdout: stdout.text(), stderr: stderr.text() };
}

/** A stream that keeps what is written to it, as a process's pipe to the runner does. */
function collector(): { stream: Writable; text(): string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** A stack trace line, as Node prints one for an uncaught exception. */
export const STACK_LINE = /^\s+at /m;
