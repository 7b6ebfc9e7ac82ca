/**
 * WORKERS > 1: the service as a Node cluster, run as operators run it (a child process). Two
 * workers share the port and both answer; the primary restarts a worker that dies, sums the
 * workers' metrics, and on SIGTERM stops them all cleanly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http, { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { readMetrics } from './support/metrics.js';
import { type LogLine, type ServerProcess, spawnServerProcess, startServerProcess } from './support/server-process.js';

/** A GET on a connection of its own, so that the primary hands each request to some worker. */
function getOnNewConnection(url: string, requestId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false, headers: { 'x-request-id': requestId } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const listeningWorkers = (service: ServerProcess): LogLine[] =>
  service.logs.filter((line) => line.msg === 'listening' && line.pid !== service.pid);

describe('start-up errors', () => {
  it('name PORT when the port is taken, in one line', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nps-port-'));
    try {
      const service = spawnServerProcess({ env: { PORT: String(port), DATA_DIR: dataDir } });
      const exit = await service.exited;
      expect(exit.code).toBe(1);
      expect(service.stderr.trim().split('\n')).toHaveLength(1);
      expect(service.stderr).toMatch(new RegExp(`^Start-up failed: PORT ${port} on 127.0.0.1 is in use`));
    } finally {
      taken.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('name HOST when it is not an address of this machine', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nps-host-'));
    try {
      const service = spawnServerProcess({ env: { HOST: '192.0.2.1', DATA_DIR: dataDir } });
      const exit = await service.exited;
      expect(exit.code).toBe(1);
      expect(service.stderr).toMatch(/^Start-up failed: HOST 192\.0\.2\.1 is not an address of this machine/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('WORKERS without DATABASE_URL', () => {
  it('stops start-up with one line naming the setting', async () => {
    const service = spawnServerProcess({ env: { WORKERS: '2' } });
    const exit = await service.exited;
    expect(exit.code).toBe(2);
    expect(service.stderr.trim().split('\n')).toHaveLength(1);
    expect(service.stderr).toMatch(/^Invalid configuration: WORKERS .*DATABASE_URL/);
  });
});

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)('WORKERS=2 on PostgreSQL', () => {
  let database: TestDatabase;
  let service: ServerProcess;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    // Three processes compile the TypeScript at start; on a busy machine that takes a while.
    service = await startServerProcess({
      env: { WORKERS: '2', DATABASE_URL: database.url!, LOG_LEVEL: 'info' },
      startTimeoutMs: 60_000,
    });
    await service.waitForLog((line) => line.msg === 'all workers listening', 60_000);
    // The primary learns of a listening worker before that worker's own log line is written.
    await service.waitForLog(() => new Set(listeningWorkers(service).map((line) => line.pid)).size === 2, 10_000);
  }, 150_000);

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
  });

  it('answers from both workers, and /metrics counts the requests of all of them', async () => {
    const workers = new Set(listeningWorkers(service).map((line) => line.pid));
    expect(workers.size).toBe(2);
    expect(workers.has(service.pid)).toBe(false);

    const ids = Array.from({ length: 40 }, (_, i) => `workers-${i}`);
    // The OpenAPI document: answered without the database, and logged at info (probes are at debug).
    const statuses = await Promise.all(ids.map((id) => getOnNewConnection(`${service.url}/api/openapi.json`, id)));
    expect(statuses).toEqual(Array(40).fill(200));

    // Each worker logs the requests it answered, with its own pid.
    const answeredBy = await Promise.all(
      ids.map((id) => service.waitForLog((line) => line.msg === 'request' && line.requestId === id)),
    );
    const pids = new Set(answeredBy.map((line) => line.pid));
    expect(pids).toEqual(workers);

    const openapi = { method: 'GET', route: '/api/openapi.json', status: '200' };
    expect((await readMetrics(service.url)).value('http_requests_total', openapi)).toBe(40);
  });

  it('restarts a worker that dies, and keeps serving', async () => {
    const before = new Set(listeningWorkers(service).map((line) => line.pid));
    const [victim] = before;
    process.kill(victim!, 'SIGKILL');
    await service.waitForLog((line) => line.msg === 'worker exited unexpectedly' && line.workerPid === victim);
    const replacement = await service.waitForLog(
      (line) => line.msg === 'listening' && line.pid !== service.pid && !before.has(line.pid),
      15_000,
    );
    expect(isAlive(replacement.pid)).toBe(true);
    const statuses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => getOnNewConnection(`${service.url}/readyz`, `after-restart-${i}`)),
    );
    expect(statuses).toEqual(Array(10).fill(200));
  });

  it('stops every worker on SIGTERM and exits 0', async () => {
    const workerPids = [...new Set(listeningWorkers(service).map((line) => line.pid))].filter(isAlive);
    expect(workerPids).toHaveLength(2);
    const exit = await service.stop();
    expect(exit).toEqual({ code: 0, signal: null });
    for (const pid of workerPids) expect(isAlive(pid)).toBe(false);
    expect(service.logs.filter((line) => line.msg === 'worker stopped')).toHaveLength(2);
    expect(service.logs.find((line) => line.msg === 'all workers stopped')).toMatchObject({ clean: true });
  });
});
