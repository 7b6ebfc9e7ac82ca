/**
 * The frame shared by the commands (migrate, seed, import, export, gen, schema, keys, webhooks):
 * help, configuration, opening the database, and turning every failure into one clear line on
 * stderr with an exit code (1: the command failed, 2: bad usage or configuration) instead of a stack
 * trace. Each command is in ./commands/ and reads and writes through a CommandIo; the scripts
 * npm runs (./<command>.ts) run it as the process, and tests can run it in theirs.
 */
import { fstatSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config/config.js';
import type { DatabaseHandle } from '../db/database.js';
import { DatabaseOpenError, databaseLabel, openConfiguredDatabase } from '../db/open-configured.js';
import { describeFailure } from '../errors/cause-chain.js';

export { databaseLabel } from '../db/open-configured.js';

/** A failure whose message says everything the operator needs; exit code 1. */
export class CommandError extends Error {}

/** Wrong arguments; printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

export interface CommandHelp {
  /** One line: how to call it, e.g. `npm run export -- [file]`. */
  usage: string;
  /** What it does and its options, printed by --help after the usage line. */
  details: string;
}

/**
 * What a command reads and writes: the process's arguments, environment and standard streams
 * when it runs as `npm run <command>` (runAsProcess), or a test's (executeCommand), so that a
 * test of what a command does need not start a process for it.
 */
export interface CommandIo {
  /** The arguments after the script, as process.argv.slice(2). */
  readonly args: readonly string[];
  /** The settings (DATABASE_URL, DATA_DIR, ...), as process.env. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** Standard input, and its size when it is a file (`< data.ndjson`); called only by a command that reads it. */
  stdin(): { stream: AsyncIterable<Uint8Array | string>; size: number | undefined };
  /** Sets the exit code, as assigning process.exitCode does: the last one set counts. */
  setExitCode(code: number): void;
}

export interface Command {
  readonly help: CommandHelp;
  /** Does the work; resolves with the exit code (undefined: 0) or rejects with why it failed. */
  readonly main: (io: CommandIo) => Promise<number | undefined>;
}

/** node:util parseArgs over the command's arguments, with its errors (unknown option, missing value) as usage errors. */
export function parseArguments<T extends ParseArgsConfig>(
  io: Pick<CommandIo, 'args'>,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs<T>({ ...config, args: [...io.args] });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** The whole number an option's `value` stands for, from `min` to `max`; a usage error otherwise. */
export function wholeNumber(flag: string, value: string, min: number, max?: number): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < min || (max !== undefined && parsed > max)) {
    const range = max === undefined ? `from ${formatCount(min)}` : `from ${formatCount(min)} to ${formatCount(max)}`;
    throw new UsageError(`${flag} must be a whole number ${range}, got "${value}".`);
  }
  return parsed;
}

/**
 * Runs a command as this process (what each src/cli/<command>.ts does): its arguments,
 * environment and standard streams, and its exit code. The process then ends by itself once the
 * command has closed what it opened, so output to a pipe is never cut short by process.exit.
 */
export function runAsProcess(command: Command): void {
  void executeCommand(command, {
    args: process.argv.slice(2),
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: standardInput,
    setExitCode: (code) => {
      process.exitCode = code;
    },
  });
}

/**
 * Runs a command with `io` and sets its exit code there; resolves when the command has ended
 * (a failure is an exit code and a line on stderr, never a rejection).
 *
 * `--help` or `-h` anywhere before a `--` prints the help and runs nothing. A reader that stops
 * reading standard output early (`npm run -s export | head`) is not a failure: the command
 * stops quietly with exit code 0.
 */
export async function executeCommand(command: Command, io: CommandIo): Promise<void> {
  const { help } = command;
  if (asksForHelp(io.args)) {
    io.stdout.write(`Usage: ${help.usage}\n\n${help.details.trim()}\n`);
    return;
  }
  const stdout = watchStdout(io);
  try {
    const code = await command.main(io);
    io.setExitCode(code ?? 0);
  } catch (error) {
    if (stdout.closed && isClosedOutputError(error)) {
      io.setExitCode(0);
    } else if (error instanceof UsageError) {
      io.stderr.write(`${error.message}\nUsage: ${help.usage}\n`);
      io.setExitCode(2);
    } else if (error instanceof ConfigError) {
      io.stderr.write(`${error.message}\n`);
      io.setExitCode(2);
    } else {
      io.stderr.write(`${failureMessage(error)}\n`);
      io.setExitCode(1);
    }
  }
}

/** Whether `--help` or `-h` comes before any `--` (the frame's rule; bench tools follow it too). */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** The process's standard input, and its size when it is redirected from a file (`< data.ndjson`). */
function standardInput(): { stream: AsyncIterable<Uint8Array | string>; size: number | undefined } {
  let size: number | undefined;
  try {
    const stat = fstatSync(0);
    if (stat.isFile()) size = stat.size;
  } catch {
    // No size: progress shows lines and rate only.
  }
  return { stream: process.stdin, size };
}

/**
 * Notes when standard output is closed by its reader. Without a listener, the EPIPE that
 * follows would end the process with a stack trace; with it, the write that failed rejects
 * (pipeline) and executeCommand knows that the reader simply had enough.
 */
function watchStdout(io: CommandIo): { readonly closed: boolean } {
  const state = { closed: false };
  io.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') {
      state.closed = true;
      return;
    }
    io.stderr.write(`Cannot write to standard output: ${error.message}\n`);
    io.setExitCode(1);
  });
  return state;
}

function isClosedOutputError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_PREMATURE_CLOSE';
}

function failureMessage(error: unknown): string {
  if (error instanceof CommandError || error instanceof DatabaseOpenError) return error.message;
  // Only the innermost cause: Drizzle's wrapper repeats the SQL and its parameters, which can
  // hold private e-mails.
  return `Failed: ${describeFailure(error)}`;
}

/**
 * The configuration for a data command. A batch of a big import can run far longer than an API
 * request may, so the API's statement timeout (and the connection watchdog derived from it) is
 * raised to the most the configuration allows.
 */
export function commandConfig(io: Pick<CommandIo, 'env'>): Config {
  return { ...loadConfig(io.env), dbStatementTimeoutMs: 600_000 };
}

/**
 * Opens and migrates the configured database, runs `use` on it and closes it, whatever `use`
 * did. A failure to open that a setting fixes names that setting (DatabaseOpenError); anything
 * else still says which database it was.
 */
export async function withCommandDatabase<T>(
  config: Config,
  use: (database: DatabaseHandle) => Promise<T>,
): Promise<T> {
  let database: DatabaseHandle;
  try {
    database = await openConfiguredDatabase(config);
  } catch (error) {
    if (error instanceof DatabaseOpenError) throw error;
    throw new CommandError(`${databaseLabel(config)} could not be opened: ${describeFailure(error)}`);
  }
  try {
    return await use(database);
  } finally {
    await database.close();
  }
}

export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
