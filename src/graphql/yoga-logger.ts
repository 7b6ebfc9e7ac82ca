/**
 * Yoga's own log lines, through the service's pino logger. Yoga logs the raw error of anything it
 * masks; a Drizzle error's message holds the SQL and its parameters (which may be private
 * e-mails), so errors are reduced to their name and driver message first.
 */
import type { YogaLogger } from 'graphql-yoga';
import type { Logger } from '../ops/logger.js';
import { describeErrorForLog } from './errors.js';

function sanitise(args: unknown[]): unknown[] {
  return args.map((arg) => (arg instanceof Error ? describeErrorForLog(arg) : arg));
}

export function yogaLogger(logger: Logger): YogaLogger {
  return {
    debug: (...args: unknown[]) => logger.debug({ yoga: sanitise(args) }, 'graphql-yoga'),
    info: (...args: unknown[]) => logger.info({ yoga: sanitise(args) }, 'graphql-yoga'),
    warn: (...args: unknown[]) => logger.warn({ yoga: sanitise(args) }, 'graphql-yoga'),
    error: (...args: unknown[]) => logger.error({ reason: sanitise(args) }, 'GraphQL request failed'),
  };
}
