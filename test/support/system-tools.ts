/**
 * What the system tier (`npm run test:system`) needs of the machine, and how to get each. The
 * tier's global set-up checks all of them before any suite starts and fails naming every one
 * that is missing, so a missing tool is a red run that says what to install, never a skip.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { chromiumPath } from './browser.js';
import { clusterToolsMissing } from './postgres-cluster.js';

interface SystemTool {
  name: string;
  /** Why it is missing, or undefined when it is there. */
  missing(): Promise<string | undefined>;
  /** One line: how to get it. */
  install: string;
}

/** Where the system tier looks for PostgreSQL and Redis when the variables are not set. */
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';

const VARNISH_VMOD_DIRS = [
  '/usr/lib/x86_64-linux-gnu/varnish/vmods',
  '/usr/lib/aarch64-linux-gnu/varnish/vmods',
  '/usr/lib/varnish/vmods',
];

function executableOnPath(command: string): boolean {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin']) {
    if (dir === '') continue;
    try {
      accessSync(`${dir}/${command}`, constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/** Whether something accepts TCP connections at the URL's host and port, within two seconds. */
function reachable(url: string, defaultPort: number): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || defaultPort) });
    const done = (reason: string | undefined) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(2_000, () => done(`nothing answers at ${hostname}:${port || defaultPort} (timed out)`));
    socket.once('connect', () => done(undefined));
    socket.once('error', (error) => done(`nothing answers at ${hostname}:${port || defaultPort} (${error.message})`));
  });
}

const SYSTEM_TOOLS: SystemTool[] = [
  {
    name: 'Chromium',
    async missing() {
      try {
        chromiumPath();
        return undefined;
      } catch {
        return `no Chromium at ${process.env.CHROMIUM_PATH || '/usr/bin/chromium'}`;
      }
    },
    install: 'apt-get install chromium (or set CHROMIUM_PATH)',
  },
  {
    name: 'PostgreSQL 15 server binaries and PgBouncer',
    missing: async () => clusterToolsMissing(),
    install: 'apt-get install postgresql-15 pgbouncer',
  },
  {
    name: 'PostgreSQL server (TEST_DATABASE_URL)',
    missing: () => reachable(process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL, 5432),
    install: `start one (pg_ctlcluster 15 main start) or set TEST_DATABASE_URL; default ${DEFAULT_TEST_DATABASE_URL}`,
  },
  {
    name: 'Redis server binary',
    missing: async () => (executableOnPath('redis-server') ? undefined : 'redis-server is not on PATH'),
    install: 'apt-get install redis-server',
  },
  {
    name: 'Redis server (TEST_REDIS_URL)',
    missing: () => reachable(process.env.TEST_REDIS_URL ?? DEFAULT_TEST_REDIS_URL, 6379),
    install: `start one (redis-server --daemonize yes --bind 127.0.0.1 --port 6379) or set TEST_REDIS_URL; default ${DEFAULT_TEST_REDIS_URL}`,
  },
  {
    name: 'Varnish with the xkey vmod',
    async missing() {
      if (!executableOnPath('varnishd')) return 'varnishd is not on PATH';
      if (!VARNISH_VMOD_DIRS.some((dir) => existsSync(`${dir}/libvmod_xkey.so`)))
        return 'the xkey vmod is not installed';
      return undefined;
    },
    install: 'apt-get install varnish varnish-modules',
  },
];

/** Every missing tool as `name: reason — how to install`, empty when all are there. */
export async function missingSystemTools(tools: SystemTool[] = SYSTEM_TOOLS): Promise<string[]> {
  const reasons = await Promise.all(tools.map((tool) => tool.missing()));
  return tools.flatMap((tool, i) =>
    reasons[i] === undefined ? [] : [`${tool.name}: ${reasons[i]} — ${tool.install}`],
  );
}
