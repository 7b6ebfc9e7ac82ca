/**
 * The frame shared by the commands (migrate, seed, import, export, gen, schema): help,
 * configuration, opening the database, and turning every failure into one clear line on stderr
 * with an exit code (1: the command failed, 2: bad usage or configuration) instead of a stack
 * trace.
 */
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

/** node:util parseArgs, with its errors (unknown option, missing value) as usage errors. */
export function parseArguments<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/**
 * Runs a command and sets the exit code. The process then ends by itself once the command has
 * closed what it opened, so output to a pipe is never cut short by process.exit.
 *
 * `--help` or `-h` anywhere before a `--` prints the help and runs nothing. A reader that stops
 * reading standard output early (`npm run -s export | head`) is not a failure: the command
 * stops quietly with exit code 0.
 */
export function runCommand(help: CommandHelp, main: () => Promise<number | undefined>): void {
  if (asksForHelp(process.argv.slice(2))) {
    process.stdout.write(`Usage: ${help.usage}\n\n${help.details.trim()}\n`);
    return;
  }
  const stdout = watchStdout();
  main().then(
    (code) => {
      process.exitCode = code ?? 0;
    },
    (error: unknown) => {
      if (stdout.closed && isClosedOutputError(error)) {
        process.exitCode = 0;
      } else if (error instanceof UsageError) {
        process.stderr.write(`${error.message}\nUsage: ${help.usage}\n`);
        process.exitCode = 2;
      } else if (error instanceof ConfigError) {
        process.stderr.write(`${error.message}\n`);
        process.exitCode = 2;
      } else {
        process.stderr.write(`${failureMessage(error)}\n`);
        process.exitCode = 1;
      }
    },
  );
}

function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/**
 * Notes when standard output is closed by its reader. Without a listener, the EPIPE that
 * follows would end the process with a stack trace; with it, the write that failed rejects
 * (pipeline) and runCommand knows that the reader simply had enough.
 */
function watchStdout(): { readonly closed: boolean } {
  const state = { closed: false };
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') {
      state.closed = true;
      return;
    }
    process.stderr.write(`Cannot write to standard output: ${error.message}\n`);
    process.exitCode = 1;
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
export function commandConfig(): Config {
  return { ...loadConfig(), dbStatementTimeoutMs: 600_000 };
}

/**
 * Opens and migrates the configured database. A failure a setting fixes names that setting
 * (DatabaseOpenError); anything else still says which database it was.
 */
export async function openCommandDatabase(config: Config): Promise<DatabaseHandle> {
  try {
    return await openConfiguredDatabase(config);
  } catch (error) {
    if (error instanceof DatabaseOpenError) throw error;
    throw new CommandError(`${databaseLabel(config)} could not be opened: ${describeFailure(error)}`);
  }
}

export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
