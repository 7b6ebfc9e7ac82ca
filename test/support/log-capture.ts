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

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

export interface PrintWatch {
  /** Stops watching; returns what was printed meanwhile (a line per call). */
  stop(): string[];
}

/**
 * Watches what the process prints outside its JSON log: the console and direct writes to
 * standard output and error (the servers of these suites log through pino to their own stream).
 * A library that prints an error with its stack would show up here.
 */
export function printedOutsideTheLog(): PrintWatch {
  const printed: string[] = [];
  const restore: Array<() => void> = [];
  for (const method of CONSOLE_METHODS) {
    const original = console[method];
    console[method] = (...args: unknown[]) => {
      printed.push(`console.${method}: ${args.map(String).join(' ')}`);
    };
    restore.push(() => {
      console[method] = original;
    });
  }
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write;
    stream.write = ((chunk: unknown) => {
      printed.push(`${stream === process.stdout ? 'stdout' : 'stderr'}: ${String(chunk)}`);
      return true;
    }) as typeof stream.write;
    restore.push(() => {
      stream.write = original;
    });
  }
  return {
    stop() {
      for (const undo of restore.splice(0)) undo();
      return printed;
    },
  };
}
