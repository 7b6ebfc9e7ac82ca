/**
 * `npm start` as operators and container runtimes use it: SIGTERM or SIGINT sent to the npm
 * process itself must end in the service's graceful shutdown, with nothing of the command left
 * running and the embedded database's folder free for the next start at once. And `npm start`
 * builds dist/ only when it is missing or older than the sources.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { lockFolder } from '../src/db/folder-lock.js';
import { describeTree, isStillRunning, processTree } from './support/process-tree.js';
import { statusOnNewConnection } from './support/raw-http.js';
import { type Exit, startFlags, startServerProcess } from './support/server-process.js';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUILD_STAMP = path.join(PROJECT_ROOT, 'dist', '.build-stamp');

/** `node scripts/build.mjs --if-stale`, as `npm start` runs it first. */
function buildIfStale(): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
  });
  return { status: result.status, stderr: result.stderr };
}

/** How the process exited, or 'still running' when it has not within `ms`. */
function exitWithin(exited: Promise<Exit>, ms: number): Promise<Exit | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'still running'>((resolve) => {
    timer = setTimeout(() => resolve('still running'), ms);
  });
  return Promise.race([exited, timeout]).finally(() => clearTimeout(timer));
}

describe.skipIf(process.platform !== 'linux')('npm start', () => {
  beforeAll(() => {
    // A fresh checkout has no dist/: build it here, not inside the first test's start-up time.
    const build = buildIfStale();
    expect(build.status, build.stderr).toBe(0);
  }, 180_000);

  it('rebuilds dist/ when it is older than the sources, and only then', () => {
    const built = statSync(BUILD_STAMP).mtime;
    try {
      utimesSync(BUILD_STAMP, new Date(0), new Date(0));
      const rebuild = buildIfStale();
      expect(rebuild).toEqual({ status: 0, stderr: 'building dist/ (src changed since the last build)\n' });
      expect(statSync(BUILD_STAMP).mtimeMs).toBeGreaterThan(0);
      expect(buildIfStale()).toEqual({ status: 0, stderr: '' });
    } finally {
      // Left as it was whatever happened, so a failed rebuild does not leave dist/ looking fresh.
      if (statSync(BUILD_STAMP, { throwIfNoEntry: false })?.mtimeMs === 0) utimesSync(BUILD_STAMP, built, built);
    }
  }, 180_000);

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops gracefully on %s sent to npm, leaving nothing running and the folder unlocked',
    async (signal) => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nps-npm-start-'));
      const npm = await startServerProcess({
        command: ['npm', 'start'],
        env: { DATA_DIR: dataDir },
        startTimeoutMs: 90_000,
      });
      const tree = processTree(npm.pid);
      try {
        expect(await statusOnNewConnection(`${npm.url}/healthz`)).toBe(200);
        const service = await npm.waitForLog((line) => line.msg === 'listening');
        expect(
          tree.map(({ pid }) => pid),
          describeTree(tree),
        ).toContain(service.pid);
        // The V8 flags of package.json's config.nodeFlags (docs/operations.md, Memory).
        const commandLine = readFileSync(`/proc/${String(service.pid)}/cmdline`, 'utf8').split('\0');
        expect(startFlags()).not.toEqual([]);
        expect(commandLine).toEqual(expect.arrayContaining([...startFlags(), 'dist/main.js']));

        npm.signal(signal);
        expect(await exitWithin(npm.exited, 30_000)).toEqual({ code: 0, signal: null });
        const left = tree.filter(isStillRunning);
        expect(left, `still running:\n${describeTree(left)}`).toEqual([]);
        expect(npm.logs.filter((line) => line.msg === 'shutting down')).toMatchObject([{ reason: signal }]);
        expect(npm.logs.some((line) => line.level >= 50)).toBe(false);
        lockFolder(dataDir).release();
      } finally {
        for (const entry of tree.filter(isStillRunning)) process.kill(entry.pid, 'SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
