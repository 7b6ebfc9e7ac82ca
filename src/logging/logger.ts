import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config/config.js';

export type { Logger };

export interface LoggerOptions {
  /** Human-readable lines instead of JSON; by default only in a terminal in development. */
  pretty?: boolean;
  /** Where JSON lines go (tests); stdout otherwise. */
  destination?: pino.DestinationStream;
}

/**
 * Private e-mails (namespace owner, profile creator) must never reach a log line. No code logs
 * them on purpose; this is the safety net for an object logged whole by mistake.
 */
const PRIVATE_FIELDS = ['ownerEmail', 'creatorEmail', 'owner_email', 'creator_email', 'profileEmail'];
const REDACTED_PATHS = PRIVATE_FIELDS.flatMap((field) => [field, `*.${field}`]);

/** The pretty printer is for a developer watching a terminal, never for log collectors. */
export function wantsPrettyLogs(
  env: NodeJS.ProcessEnv = process.env,
  stdout: { isTTY?: boolean } = process.stdout,
): boolean {
  return stdout.isTTY === true && env.NODE_ENV === 'development';
}

/** JSON lines on stdout at `level` (from LOG_LEVEL); pretty lines in a development terminal. */
export function createLogger(level: LogLevel, options: LoggerOptions = {}): Logger {
  const pretty = options.pretty ?? wantsPrettyLogs();
  const settings: pino.LoggerOptions = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[private]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true } } } : {}),
  };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}
