/**
 * An exclusive lock on the embedded database's folder. PGlite does not lock its files, and two
 * processes writing one folder damage the data, so the folder holds a lock file naming the
 * process that has it open. A lock left by a process that no longer runs is taken over.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const LOCK_FILE = '.name-profile-service.lock';

export class FolderInUseError extends Error {
  constructor(
    readonly folder: string,
    readonly pid: number,
  ) {
    super(`the embedded database in ${folder} is in use by process ${pid}; stop that process first`);
    this.name = 'FolderInUseError';
  }
}

export interface FolderLock {
  release(): void;
}

export function lockFolder(folder: string): FolderLock {
  const file = path.join(folder, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return { release: () => rmSync(file, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && isRunning(holder)) throw new FolderInUseError(folder, holder);
      // Stale: its process is gone (crashed or killed). Take it over.
      rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock ${folder}: another process keeps taking ${LOCK_FILE}`);
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
