/**
 * Debian's Varnish with the shipped VCL (deploy/varnish/default.vcl) in front of a test's
 * service: `varnishd -F -j none -n <tmp> -a 127.0.0.1:<port> -f <the VCL, backend port
 * rewritten>`, stopped by its PID. Tests that use it are system-tier: without varnishd or the
 * xkey vmod they fail with how to install them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from './eventually.js';
import { PROJECT_ROOT } from './server-process.js';
import { freePort } from './throwaway-redis.js';

const VCL_PATH = path.join(PROJECT_ROOT, 'deploy/varnish/default.vcl');

const INSTALL_HINT =
  "install Debian's Varnish and the xkey vmod: `apt-get install varnish varnish-modules` (as .ci/run does)";

/** The varnishd binary; throws naming the packages when it or the xkey vmod is missing. */
export function varnishd(): string {
  const binary = ['/usr/sbin/varnishd', '/usr/local/sbin/varnishd'].find((candidate) => existsSync(candidate));
  if (binary === undefined) throw new Error(`varnishd not found: ${INSTALL_HINT}`);
  const vmods = [
    '/usr/lib/x86_64-linux-gnu/varnish/vmods',
    '/usr/lib/aarch64-linux-gnu/varnish/vmods',
    '/usr/lib/varnish/vmods',
  ];
  if (!vmods.some((folder) => existsSync(path.join(folder, 'libvmod_xkey.so')))) {
    throw new Error(`the xkey vmod (libvmod_xkey.so) was not found: ${INSTALL_HINT}`);
  }
  return binary;
}

export interface Varnish {
  url: string;
  port: number;
  pid: number;
  /** Its `-n` folder, for varnishstat. */
  workDir: string;
  stop(): Promise<void>;
}

/** The shipped VCL with the backend on `backendPort` (what an operator edits, and nothing else). */
function vclFor(backendPort: number): string {
  const vcl = readFileSync(VCL_PATH, 'utf8');
  const rewritten = vcl.replace(/(\.port\s*=\s*")4000(")/, `$1${backendPort}$2`);
  if (rewritten === vcl) throw new Error(`${VCL_PATH} no longer has the backend port 4000 to rewrite`);
  return rewritten;
}

/**
 * Starts varnishd on `port` (a free one unless given) in front of 127.0.0.1:`backendPort`, with the
 * shipped VCL as `edit` changes it (a test's cache configured otherwise than the one shipped).
 */
export async function startVarnish(
  backendPort: number,
  port?: number,
  edit: (vcl: string) => string = (vcl) => vcl,
): Promise<Varnish> {
  const binary = varnishd();
  const listenPort = port ?? (await freePort());
  const folder = mkdtempSync(path.join(os.tmpdir(), 'nps-varnish-'));
  const vclFile = path.join(folder, 'default.vcl');
  const workDir = path.join(folder, 'work');
  writeFileSync(vclFile, edit(vclFor(backendPort)));
  const child: ChildProcess = spawn(
    binary,
    [
      '-F',
      '-j',
      'none',
      '-n',
      workDir,
      '-a',
      `127.0.0.1:${listenPort}`,
      '-f',
      vclFile,
      '-s',
      'malloc,64m',
      '-T',
      'none',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${listenPort}`;
  const answersOrExited = async () => {
    if (child.exitCode !== null) return 'exited';
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return 'answers';
  };
  const started = await eventually(answersOrExited, {
    what: 'varnishd answering',
    withinMs: 20_000,
    everyMs: 100,
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}: ${output.slice(-2000)}`);
  });
  if (started === 'exited') throw new Error(`varnishd exited (${child.exitCode}): ${output.slice(-2000)}`);
  const pid = child.pid ?? 0;
  return {
    url,
    port: listenPort,
    pid,
    workDir,
    async stop() {
      if (child.exitCode === null) {
        process.kill(pid, 'SIGTERM');
        const killed = setTimeout(() => child.exitCode === null && process.kill(pid, 'SIGKILL'), 5000);
        await exited;
        clearTimeout(killed);
      }
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
