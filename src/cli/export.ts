/**
 * `npm run export -- <file>`: writes the whole configured database as NDJSON, in the format
 * `npm run import` reads (private e-mails included: keep the file safe). With `-` or no argument
 * it writes to standard output; use `npm run -s export` then, so npm's own banner stays out of
 * the data. A file is written under a temporary name and renamed at the end, so a failed export
 * never leaves a truncated file behind that looks complete.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { type ExportCounts, exportDatabase } from '../data/exporter.js';
import type { Database } from '../db/database.js';
import {
  CommandError,
  commandConfig,
  formatCount,
  formatSeconds,
  openCommandDatabase,
  parseArguments,
  runCommand,
  UsageError,
} from './command.js';

const USAGE = 'npm run export -- <file.ndjson>   ("-" or nothing: standard output, with npm run -s)';

runCommand(USAGE, async () => {
  const path = fileArgument();
  const config = commandConfig();
  const database = await openCommandDatabase(config);
  const startedAt = Date.now();
  try {
    const counts =
      path === undefined ? await exportDatabase(database.db, process.stdout) : await exportToFile(database.db, path);
    // stderr, as stdout may be the data itself.
    process.stderr.write(
      `Exported ${formatCount(counts.namespaces)} namespaces and ${formatCount(counts.profiles)} profiles ` +
        `to ${path ?? 'standard output'} in ${formatSeconds(Date.now() - startedAt)}.\n`,
    );
  } finally {
    await database.close();
  }
});

function fileArgument(): string | undefined {
  const { positionals } = parseArguments({ allowPositionals: true, strict: true });
  if (positionals.length > 1) throw new UsageError('Name at most one file to export to.');
  const path = positionals[0];
  return path === '-' ? undefined : path;
}

async function exportToFile(db: Database, path: string): Promise<ExportCounts> {
  const partial = `${path}.partial-${process.pid}`;
  const output = createWriteStream(partial, { flags: 'wx' });
  try {
    const counts = await exportDatabase(db, output);
    output.end();
    await finished(output);
    await rename(partial, path);
    return counts;
  } catch (error) {
    output.destroy();
    await rm(partial, { force: true });
    // File-system errors carry a syscall; database errors go to the generic message.
    if (error instanceof Error && 'syscall' in error) throw new CommandError(`Cannot write ${path}: ${error.message}`);
    throw error;
  }
}
