/**
 * The frame shared by the data commands (migrate, seed, import, export, gen): configuration,
 * opening the database, and turning every failure into one clear line on stderr with an exit
 * code (1: the command failed, 2: bad usage or configuration) instead of a stack trace.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config/config.js';
import type { DatabaseHandle } from '../db/database.js';
import { describeDatabaseError } from '../db/errors.js';
import { openConfiguredDatabase } from '../db/open-configured.js';

/** A failure whose message says everything the operator needs; exit code 1. */
export class CommandError extends Error {}

/** Wrong arguments; printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

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
 */
export function runCommand(usage: string, main: () => Promise<number | undefined>): void {
  main().then(
    (code) => {
      process.exitCode = code ?? 0;
    },
    (error: unknown) => {
      if (error instanceof UsageError) {
        process.stderr.write(`${error.message}\nUsage: ${usage}\n`);
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

function failureMessage(error: unknown): string {
  if (error instanceof CommandError) return error.message;
  // Only the innermost cause: Drizzle's wrapper repeats the SQL and its parameters, which can
  // hold private e-mails.
  return `Failed: ${describeDatabaseError(error)}`;
}

/**
 * The configuration for a data command. A batch of a big import can run far longer than an API
 * request may, so the API's statement timeout (and the connection watchdog derived from it) is
 * raised to the most the configuration allows.
 */
export function commandConfig(): Config {
  return { ...loadConfig(), dbStatementTimeoutMs: 600_000 };
}

/** Opens and migrates the configured database, explaining the usual reasons it fails. */
export async function openCommandDatabase(config: Config): Promise<DatabaseHandle> {
  try {
    return await openConfiguredDatabase(config);
  } catch (error) {
    throw new CommandError(
      `${databaseLabel(config)} could not be opened: ${describeDatabaseError(error)}${openHint(config)}`,
    );
  }
}

/** Where the data lives, for messages: the URL without its password. */
export function databaseLabel(config: Config): string {
  if (config.databaseUrl === undefined) return `The embedded database in ${config.dataDir}`;
  const url = new URL(config.databaseUrl);
  if (url.password !== '') url.password = '***';
  return `The PostgreSQL database ${url.toString()}`;
}

function openHint(config: Config): string {
  return config.databaseUrl === undefined
    ? '. The embedded database can be used by one process at a time: stop the server (and any other command using DATA_DIR) first.'
    : '. Check DATABASE_URL and that the server is running.';
}

export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
