/**
 * A process that opens the embedded database in the folder given as its argument, the way the
 * service does, and keeps it open until its standard input closes. It prints one JSON line:
 * `{"pid":…,"open":true}` once open, or `{"pid":…,"open":false,"error":"…"}` when refused.
 * The folder-lock tests kill it, restart it, and run it in a PID namespace of its own.
 */
import { openDatabase } from '../../src/db/database.js';

const folder = process.argv[2];
if (folder === undefined) throw new Error('usage: hold-embedded-database.ts <folder>');

try {
  const database = await openDatabase({ url: undefined, dataDir: folder });
  await database.ping();
  process.stdout.write(`${JSON.stringify({ pid: process.pid, open: true })}\n`);
  process.stdin.resume();
  process.stdin.once('end', () => {
    void database.close().then(() => process.exit(0));
  });
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  process.stdout.write(`${JSON.stringify({ pid: process.pid, open: false, error: message })}\n`);
  process.exit(1);
}
