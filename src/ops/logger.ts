import pino, { type Logger } from 'pino';
import type { LogLevel } from '../config/config.js';

export type { Logger };

/** JSON lines on stdout; pretty lines when a developer runs the service in a terminal. */
export function createLogger(level: LogLevel, options: { pretty?: boolean } = {}): Logger {
  const pretty = options.pretty ?? (process.stdout.isTTY === true && process.env.NODE_ENV !== 'production');
  return pino({
    level,
    base: { pid: process.pid },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true } } } : {}),
  });
}
