/**
 * The embedded database's folder is opened by one process at a time: a second opener gets a
 * clear error instead of writing the same files, and a lock left by a dead process is taken over.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { FolderInUseError, lockFolder } from '../src/db/folder-lock.js';

describe('embedded database folder lock', () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'nps-lock-'));
  });
  afterEach(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  it('refuses a second opener while the first has the folder open, and lets it in after close', async () => {
    const first = await openDatabase({ url: undefined, dataDir: folder });
    await expect(openDatabase({ url: undefined, dataDir: folder })).rejects.toThrow(
      `the embedded database in ${folder} is in use by process ${process.pid}; stop that process first`,
    );
    await first.close();
    const second = await openDatabase({ url: undefined, dataDir: folder });
    await second.ping();
    await second.close();
  });

  it('takes over a lock whose process is gone', () => {
    // A process that has certainly exited: its pid is free (or reused, which the check allows).
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    writeFileSync(path.join(folder, '.name-profile-service.lock'), gone);
    const lock = lockFolder(folder);
    expect(() => lockFolder(folder)).toThrow(FolderInUseError);
    lock.release();
    lockFolder(folder).release();
  });
});
