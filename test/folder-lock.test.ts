/**
 * The embedded database's folder is opened by one process at a time: a second opener gets a
 * clear error naming the folder instead of writing the same files, and the lock ends with the
 * process that holds it, however that ends, so a restart after a crash is let in at once, even
 * when the restarted process has the crashed one's PID (as it does in a container).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { FolderInUseError, LOCK_COMMANDS, LOCK_FILE, lockFolder } from '../src/db/folder-lock.js';
import { copyOfTemplate } from './support/pglite-templates.js';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
const HOLDER = path.join('test', 'support', 'hold-embedded-database.ts');

interface HolderLine {
  pid: number;
  open: boolean;
  error?: string;
}

interface Holder {
  child: ChildProcess;
  /** The holder's one line: opened, or refused. */
  line: Promise<HolderLine>;
  exited: Promise<void>;
}

const holders = new Set<ChildProcess>();

/** Runs the holder, optionally under a wrapper command (unshare). */
function startHolder(folder: string, wrapper: string[] = []): Holder {
  const node = [process.execPath, '--import', 'tsx', HOLDER, folder];
  const [command, ...args] = [...wrapper, ...node] as [string, ...string[]];
  const child = spawn(command, args, { cwd: PROJECT_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  holders.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = new Promise<HolderLine>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const end = stdout.indexOf('\n');
      if (end >= 0) resolve(JSON.parse(stdout.slice(0, end)) as HolderLine);
    });
    void exited.then(() => reject(new Error(`the holder exited without a line\nstdout: ${stdout}\nstderr: ${stderr}`)));
  });
  return { child, line, exited };
}

function canUnsharePid(): boolean {
  return spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;
}

describe('embedded database folder lock', () => {
  let folder: string;
  beforeEach(() => {
    // A copy of a new database: the lock is what is tested, not initdb, which is the costly part.
    folder = copyOfTemplate('empty') ?? mkdtempSync(path.join(os.tmpdir(), 'nps-lock-'));
  });
  afterEach(() => {
    for (const child of holders) child.kill('SIGKILL');
    holders.clear();
    rmSync(folder, { recursive: true, force: true });
  });

  it('refuses a second opener while the first has the folder open, and lets it in after close', async () => {
    const first = await openDatabase({ url: undefined, dataDir: folder });
    const refused = openDatabase({ url: undefined, dataDir: folder });
    await expect(refused).rejects.toThrow(FolderInUseError);
    await expect(refused).rejects.toThrow(
      `the embedded database in ${folder} is in use by another process (pid ${process.pid} on ${os.hostname()}); stop that process first`,
    );
    await first.close();
    const second = await openDatabase({ url: undefined, dataDir: folder });
    await second.ping();
    await second.close();
  });

  it('is not held by a lock file that a crashed process left, even when its PID now runs something else', () => {
    // The PID of a running process that does not hold the lock: this test runner's parent.
    writeFileSync(path.join(folder, LOCK_FILE), `${process.ppid}\n`);
    const lock = lockFolder(folder);
    expect(() => lockFolder(folder)).toThrow(FolderInUseError);
    lock.release();
    lockFolder(folder).release();
  });

  const installed = LOCK_COMMANDS.filter(({ command }) => spawnSync(command, ['--version']).error === undefined);
  it.each(installed.map((lockCommand) => [lockCommand.command, lockCommand] as const))(
    'locks with %s, and it excludes the others',
    (_name, lockCommand) => {
      const lock = lockFolder(folder, [lockCommand]);
      for (const other of installed) expect(() => lockFolder(folder, [other])).toThrow(FolderInUseError);
      lock.release();
      for (const other of installed) lockFolder(folder, [other]).release();
    },
  );

  it('says what to install when no lock command is', () => {
    expect(() => lockFolder(folder, [{ command: 'nps-no-such-flock', args: [] }])).toThrow(
      'needs nps-no-such-flock to lock its folder',
    );
  });

  it('is released when the holder is killed with SIGKILL', async () => {
    const holder = startHolder(folder);
    expect(await holder.line).toMatchObject({ open: true });
    await expect(openDatabase({ url: undefined, dataDir: folder })).rejects.toThrow(
      `the embedded database in ${folder} is in use by another process (pid ${holder.child.pid} on`,
    );
    holder.child.kill('SIGKILL');
    await holder.exited;
    const after = await openDatabase({ url: undefined, dataDir: folder });
    await after.ping();
    await after.close();
  }, 60_000);

  it('is released when the holder closes the database', async () => {
    const holder = startHolder(folder);
    expect(await holder.line).toMatchObject({ open: true });
    holder.child.stdin!.end();
    await holder.exited;
    expect(holder.child.exitCode).toBe(0);
    expect(readFileSync(path.join(folder, LOCK_FILE), 'utf8')).toBe('');
    lockFolder(folder).release();
  }, 60_000);

  // A container's service runs with the same small PID after every restart. Each run here gets
  // a fresh PID namespace, so the holder is PID 1 both times, as in a container.
  it.skipIf(!canUnsharePid())(
    'lets a restart with the crashed process PID in (PID namespaces; needs root and unshare)',
    async () => {
      const inNamespace = ['unshare', '--pid', '--fork', '--mount-proc'];
      const crashed = startHolder(folder, inNamespace);
      const crashedLine = await crashed.line;
      expect(crashedLine).toMatchObject({ open: true });
      // The holder is unshare's forked child; kill it, not unshare, as the OOM killer would.
      const unsharePid = crashed.child.pid!;
      const holderPid = Number(readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim());
      process.kill(holderPid, 'SIGKILL');
      await crashed.exited;

      const restarted = startHolder(folder, inNamespace);
      const restartedLine = await restarted.line;
      expect(restartedLine.pid).toBe(crashedLine.pid);
      expect(restartedLine).toEqual({ pid: crashedLine.pid, open: true });
      restarted.child.stdin!.end();
      await restarted.exited;
    },
    60_000,
  );
});
