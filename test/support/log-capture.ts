/** A pino logger whose lines a test can read back. */
import pino from 'pino';
import type { Logger } from '../../src/logging/logger.js';

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLog {
  logger: Logger;
  lines: LogLine[];
  /** Lines at `level` (pino's name: 'warn', 'info', ...) whose message contains `text`. */
  find(level: pino.Level, text: string): LogLine[];
}

export function captureLog(level: pino.LevelWithSilent = 'debug'): CapturedLog {
  const lines: LogLine[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return {
    logger,
    lines,
    find: (at, text) => lines.filter((line) => line.level === pino.levels.values[at] && line.msg.includes(text)),
  };
}
