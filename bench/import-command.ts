/**
 * `npm run import` as the import benchmarks run it: the real command (tsx src/cli/import.ts, no
 * npm in between) as a process of its own, timed from outside, with the CPU of the importer and
 * of the PostgreSQL backend of its transaction (when PostgreSQL runs on this machine) sampled
 * while it runs. bench/import.ts and bench/change-log.ts share it.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { cpuSecondsOf } from '../test/support/process-tree.js';
import { collectOutput } from '../test/support/run-node.js';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ImportCommandRun {
  /** Wall time of the command, start of the process to its exit. */
  importSeconds: number;
  /** What the command printed, e.g. "1,000,000 profiles (1,000,000 new or changed) … in 52.1 s". */
  importSummary: string;
  importerCpuSeconds: number | null;
  backendCpuSeconds: number | null;
}

/** Runs `npm run import -- <file>` into `databaseUrl`; throws with its stderr when it fails. */
export async function runImportCommand(databaseUrl: string, file: string): Promise<ImportCommandRun> {
  const monitor = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/import.ts', file], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collectOutput(child);
  let importerCpu: number | null = null;
  let backendCpu: number | null = null;
  let backendPid: number | undefined;
  const sampler = setInterval(() => {
    importerCpu = cpuSecondsOf(child.pid ?? 0) ?? importerCpu;
    if (backendPid === undefined) {
      monitor<{ pid: number }[]>`
        select pid from pg_stat_activity
        where datname = current_database() and application_name = 'name-profile-service' and xact_start is not null`
        .then(([row]) => {
          backendPid ??= row?.pid;
        })
        .catch(() => {});
    } else {
      backendCpu = cpuSecondsOf(backendPid) ?? backendCpu;
    }
  }, 250);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const importSeconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  await monitor.end();
  if (code !== 0) throw new Error(`the import failed (exit ${code}):\n${output.stderr}`);
  const summary = /: (.*)\.$/m.exec(output.stdout)?.[1] ?? output.stdout.trim();
  return {
    importSeconds,
    importSummary: summary.replace(/^.*?lines, /, ''),
    importerCpuSeconds: importerCpu,
    backendCpuSeconds: backendCpu,
  };
}
