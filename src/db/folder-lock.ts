/**
 * An exclusive lock on the embedded database's folder. PGlite does not lock its files, and two
 * processes writing one folder damage the data.
 *
 * The lock is a flock(2) lock on a file in the folder. The kernel holds it for the open file
 * description and drops it when the last descriptor of it closes, so it ends with the process
 * however the process ends (crash, SIGKILL, the OOM killer), and a restart whose process gets the
 * same PID (as it does in a container) is not mistaken for the old holder. Nothing keeps it alive
 * from a timer, so a main thread busy in PGlite for minutes cannot lose it. Processes in other
 * containers that mount the same folder see it too: they share the kernel's lock on the inode.
 *
 * Node has no flock(). This process opens the file and hands the descriptor to `flock(1)` as its
 * descriptor 3; the child locks the shared open file description and exits, and the lock stays
 * with this process's descriptor. (fcntl(2) locks would not do: they belong to the process that
 * takes them and would end with the child.) See docs/operations.md for the choice and its limits.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const LOCK_FILE = '.name-profile-service.lock';

export class FolderInUseError extends Error {
  constructor(
    readonly folder: string,
    /** What the holder wrote into the lock file ("pid 24 on host a1b2c3"), when it could be read. */
    readonly holder: string | undefined,
  ) {
    const who = holder === undefined ? '' : ` (${holder})`;
    super(`the embedded database in ${folder} is in use by another process${who}; stop that process first`);
    this.name = 'FolderInUseError';
  }
}

export interface FolderLock {
  release(): void;
}

export interface LockCommand {
  command: string;
  args: string[];
}

/**
 * Commands that take an exclusive, non-blocking flock(2) on their descriptor 3 and exit 0 when
 * they got it, 1 when another open file description holds it, and anything else on an error.
 * The first one installed is used.
 */
export const LOCK_COMMANDS: readonly LockCommand[] = [
  // util-linux (Debian, Ubuntu, RHEL) and BusyBox (Alpine).
  { command: 'flock', args: ['--exclusive', '--nonblock', '3'] },
  // macOS has no flock(1) but ships Perl; so do most Linux systems.
  {
    command: 'perl',
    args: [
      '-MFcntl=:flock',
      '-e',
      'open(my $f, "+<&=", 3) or do { print STDERR "descriptor 3: $!\\n"; exit 2 };' +
        ' exit 0 if flock($f, LOCK_EX | LOCK_NB); exit 1 if $!{EWOULDBLOCK};' +
        ' print STDERR "flock: $!\\n"; exit 2',
    ],
  },
];

/** Long enough for a loaded machine to start a small program; a non-blocking lock never waits. */
const LOCK_COMMAND_TIMEOUT_MS = 10_000;

/** Locks `folder` (which must exist) or throws FolderInUseError naming it. */
export function lockFolder(folder: string, commands: readonly LockCommand[] = LOCK_COMMANDS): FolderLock {
  const file = path.join(folder, LOCK_FILE);
  // Read-write: NFS emulates flock() with fcntl() locks, which need a writable descriptor.
  const fd = openSync(file, constants.O_RDWR | constants.O_CREAT, 0o644);
  try {
    if (!takeLock(fd, file, commands)) throw new FolderInUseError(folder, readHolder(file));
    // For the error message of a refused opener only: the lock itself is the kernel's.
    ftruncateSync(fd, 0);
    writeSync(fd, `pid ${process.pid} on ${os.hostname()}\n`, 0);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      try {
        ftruncateSync(fd, 0);
      } finally {
        // The file stays: deleting it would let a waiting opener lock the old inode while a new
        // opener locks a new file under the same name.
        closeSync(fd);
      }
    },
  };
}

function takeLock(fd: number, file: string, commands: readonly LockCommand[]): boolean {
  for (const { command, args } of commands) {
    const result = spawnSync(command, args, {
      stdio: ['ignore', 'ignore', 'pipe', fd],
      encoding: 'utf8',
      timeout: LOCK_COMMAND_TIMEOUT_MS,
    });
    if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') continue;
    if (result.error !== undefined) throw new Error(`could not lock ${file} with ${command}: ${result.error.message}`);
    if (result.status === 0) return true;
    if (result.status === 1) return false;
    const status = result.status ?? result.signal;
    throw new Error(`could not lock ${file}: ${command} exited with ${status}: ${result.stderr.trim()}`);
  }
  const names = commands.map(({ command }) => command).join(' or ');
  throw new Error(`could not lock ${file}: the embedded database needs ${names} to lock its folder; install one`);
}

function readHolder(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
