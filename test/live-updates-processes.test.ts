/**
 * Live updates across real server processes: two servers on one PostgreSQL each tell their own
 * subscriber of an import made by the CLI (`npm run import`), and SIGTERM ends every kind of
 * stream cleanly before the process exits within SHUTDOWN_TIMEOUT_MS.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { runCli } from './support/cli.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { openRestStream, subscribeOverSse, subscribeOverWebSocket, webSocketClient } from './support/live-clients.js';
import { readMetrics } from './support/metrics.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

const NAMESPACE = { kind: 'namespace', name: 'multi', ownerEmail: 'multi-owner@example.com' };
const profile = (description: string) => ({
  kind: 'profile',
  name: 'shared@multi',
  creatorEmail: 'shared@example.org',
  description,
});

/** Waits until the service's /metrics counts `count` open subscriptions of `transport`. */
async function openSubscriptions(service: ServerProcess, transport: string, count: number): Promise<void> {
  await eventually(async () => (await readMetrics(service.url)).value('live_subscriptions', { transport }) === count, {
    what: `${count} open ${transport} subscriptions in /metrics`,
    withinMs: 10_000,
  });
}

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)('two servers on one PostgreSQL', () => {
  let testDb: TestDatabase;
  let folder: string;
  const services: ServerProcess[] = [];
  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    const handle = await testDb.open();
    await importLines(handle.db, ndjson(NAMESPACE, profile('Before')));
    await handle.close();
    folder = mkdtempSync(path.join(os.tmpdir(), 'nps-live-'));
    for (let index = 0; index < 2; index += 1) {
      services.push(await startServerProcess({ env: testDb.env, startTimeoutMs: 60_000 }));
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop()));
    await testDb?.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('tells a subscriber on each of one import made by the CLI', async () => {
    const [first, second] = services as [ServerProcess, ServerProcess];
    const sse = subscribeOverSse(first.url, ['shared@multi']);
    const rest = await openRestStream(second.url, 'shared@multi');
    try {
      await openSubscriptions(first, 'sse', 1);
      await openSubscriptions(second, 'rest', 1);
      const file = path.join(folder, 'change.ndjson');
      writeFileSync(file, `${ndjson(profile('After the CLI')).join('\n')}\n`);
      const result = await runCli('import', [file], { env: testDb.env });
      expect(result.code, result.stderr).toBe(0);
      const [event] = await sse.waitFor(1, 5000);
      expect(event?.profileChanged.profile?.description).toBe('After the CLI');
      const [restEvent] = await rest.waitFor(1, 5000);
      expect(restEvent?.event).toBe('profile');
      expect(JSON.parse(restEvent?.data ?? '{}')).toMatchObject({ name: 'shared@multi', description: 'After the CLI' });
    } finally {
      sse.stop();
      rest.stop();
    }
  }, 60_000);
});

describe('SIGTERM with open streams (embedded database)', () => {
  it('ends SSE, WebSocket and REST streams cleanly and exits 0 within SHUTDOWN_TIMEOUT_MS', async () => {
    const database = await createTestDatabase('pglite');
    // Long enough that closing PGlite on a loaded machine (4.9 s once in CI) stays well inside it,
    // while streams that held the shutdown would run into it: then the bound and the log below fail.
    const shutdownTimeoutMs = 20_000;
    const service = await startServerProcess({
      env: { DATA_DIR: database.dataDir, SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) },
      startTimeoutMs: 60_000,
    });
    const client = webSocketClient(service.url);
    try {
      const rest = await openRestStream(service.url, 'demo@me');
      const sse = subscribeOverSse(service.url, ['demo@me']);
      const ws = subscribeOverWebSocket(client, ['demo@me']);
      await openSubscriptions(service, 'sse', 1);
      await openSubscriptions(service, 'websocket', 1);
      const signalledAt = Date.now();
      service.signal('SIGTERM');
      await Promise.all([rest.waitForEnd(), sse.waitForEnd(), ws.waitForEnd()]);
      // Ended, not failed: the REST body ended and the SSE stream completed.
      expect(rest.errors).toEqual([]);
      expect(sse.errors).toEqual([]);
      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalledAt).toBeLessThan(shutdownTimeoutMs);
      expect(service.logs.some((line) => line.msg.startsWith('shutdown timeout'))).toBe(false);
    } finally {
      await client.dispose();
      await service.stop();
      await database.drop();
    }
  }, 90_000);
});
