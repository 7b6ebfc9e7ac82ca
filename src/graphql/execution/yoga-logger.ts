/**
 * Yoga's own log lines, through the service's pino logger. Yoga logs the raw error of anything it
 * masks; a Drizzle error's message holds the SQL and its parameters (which may be private
 * e-mails), so errors are reduced to their name and driver message first.
 */
import type { YogaLogger } from 'graphql-yoga';
import type { Logger } from '../../logging/logger.js';
import { describeErrorForLog, logLevelOf } from './error-masking.js';

function sanitise(args: unknown[]): unknown[] {
  return args.map((arg) => (arg instanceof Error ? describeErrorForLog(arg) : arg));
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

export function yogaLogger(logger: Logger): YogaLogger {
  return {
    debug: (...args: unknown[]) => logger.debug({ yoga: sanitise(args) }, 'graphql-yoga'),
    info: (...args: unknown[]) => logger.info({ yoga: sanitise(args) }, 'graphql-yoga'),
    warn: (...args: unknown[]) => logger.warn({ yoga: sanitise(args) }, 'graphql-yoga'),
    // Yoga reports every error it masks here; most are the client's, and belong at info.
    error: (...args: unknown[]) => {
      const level = LEVELS[Math.max(0, ...args.map((arg) => LEVELS.indexOf(logLevelOf(arg))))] ?? 'error';
      logger[level]({ reason: sanitise(args) }, 'GraphQL request failed');
    },
  };
}
