/**
 * Where a test run's CPU goes, file by file: with TEST_CPU_LOG set to a file name, each test file
 * appends one JSON line there when it ends: its wall time and the CPU its worker spent on it (the
 * worker process's own, and its child processes' that ended in the meantime, from /proc). Loaded
 * by every project (vitest.config.ts, `setupFiles`); without the variable it does nothing.
 * docs/testing.md, "Test run time", says how to read it.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';

const log = process.env.TEST_CPU_LOG;

/** CPU seconds of the reaped child processes (Linux: /proc/self/stat, cutime + cstime). */
function childrenCpuSeconds(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    // After the command name: state is field 3, so cutime (16) and cstime (17) are at 13 and 14.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

if (log !== undefined && log !== '') {
  let cpu = process.cpuUsage();
  let children = 0;
  let wall = 0;
  let file = 'unknown';
  beforeAll(() => {
    file = (expect.getState().testPath ?? file).replace(/^.*\/test\//, 'test/');
    cpu = process.cpuUsage();
    children = childrenCpuSeconds();
    wall = performance.now();
  });
  afterAll(() => {
    const used = process.cpuUsage(cpu);
    const line = {
      file,
      path: process.env.TEST_GRAPHQL_HTTP_PATH ?? 'service',
      wallSeconds: (performance.now() - wall) / 1000,
      cpuSeconds: (used.user + used.system) / 1e6,
      childrenCpuSeconds: childrenCpuSeconds() - children,
    };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  });
}
