/**
 * The change log's retention (src/ops/change-log-retention.ts): a pass removes the entries older
 * than CHANGE_LOG_RETENTION_DAYS and keeps the rest, a cursor from before them is then refused
 * (410), and /metrics shows the log's size, its oldest entry and what was pruned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { createLogger } from '../src/logging/logger.js';
import { ChangeLogRetention } from '../src/ops/change-log-retention.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { readMetrics } from './support/metrics.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe.each(databaseKinds())('the change log retention on %s', (kind) => {
  const database = useTestDatabase(kind);
  let server: TestServer;

  beforeAll(async () => {
    const lines = [
      { kind: 'namespace', name: 'keep', ownerEmail: 'owner@keep.example' },
      ...Array.from({ length: 5 }, (_, i) => ({ kind: 'profile', name: `p${i}@keep`, creatorEmail: 'x@example.com' })),
    ];
    expect((await importLines(database.handle.db, ndjson(...lines))).ok).toBe(true);
    server = await startTestServer(database.handle, { PROFILE_LIMIT: '0' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('shows the log in /metrics', async () => {
    await eventually(async () => {
      const metrics = await readMetrics(server.url);
      return (
        (metrics.value('change_log_bytes') ?? 0) > 0 &&
        Math.abs((metrics.value('change_log_oldest_entry_timestamp_seconds') ?? 0) * 1000 - Date.now()) < DAY_MS
      );
    }, 'the change log figures');
    expect((await readMetrics(server.url)).value('change_log_pruned_entries_total')).toBe(0);
  });

  it('keeps what is younger than the retention, and prunes the rest when its time comes', async () => {
    const first = (await (await fetch(`${server.url}/api/changes?limit=1`)).json()) as { next: string };
    const retention = new ChangeLogRetention(database.handle.db, 30, createLogger('silent', { pretty: false }));
    try {
      await retention.prune();
      expect(retention.figures().pruned).toBe(0);
      expect((await fetch(`${server.url}/api/changes?after=${first.next}`)).status).toBe(200);
      // Thirty-one days later the entries are older than thirty days.
      await retention.prune(Date.now() + 31 * DAY_MS);
      expect(retention.figures()).toMatchObject({ pruned: 5, oldestAt: undefined });
      expect((await fetch(`${server.url}/api/changes?after=${first.next}`)).status).toBe(410);
      const now = (await (await fetch(`${server.url}/api/changes?after=now`)).json()) as { next: string };
      expect((await fetch(`${server.url}/api/changes?after=${now.next}`)).status).toBe(200);
    } finally {
      await retention.close();
    }
  });
});
