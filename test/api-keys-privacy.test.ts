/**
 * Nothing shows an API key: not the request logs at info, not the traces, not /metrics, not the
 * database (pg_dump on PostgreSQL, the data folder's files on PGlite), not error answers. Logs
 * carry the key's id. The keys are used on every path a request can take: valid, unknown,
 * malformed, revoked, in the query string, over REST, GraphQL and graphql-ws.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { seedDemoData } from '../src/data/seed.js';
import { revokeApiKey } from '../src/db/api-key-queries.js';
import { sql } from '../src/db/drizzle.js';
import { generateApiKey } from '../src/limits/api-key-credentials.js';
import { createKey, type TestKey } from './support/api-keys.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';
import { type CapturedLog, captureLog } from './support/log-capture.js';
import { type OtlpReceiver, startOtlpReceiver } from './support/otlp-receiver.js';

const PG_DUMP = ['/usr/lib/postgresql/15/bin/pg_dump', 'pg_dump'].find((candidate) => {
  try {
    execFileSync(candidate, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

/** Every file under `folder`, read whole. */
function filesUnder(folder: string): Buffer[] {
  return readdirSync(folder).flatMap((entry) => {
    const file = path.join(folder, entry);
    return statSync(file).isDirectory() ? filesUnder(file) : [readFileSync(file)];
  });
}

describe.each(databaseKinds())('API keys are never shown, on %s', (kind) => {
  const database = useTestDatabase(kind, seedDemoData);
  let receiver: OtlpReceiver;
  let server: TestServer;
  let log: CapturedLog;
  let valid: TestKey;
  let revoked: TestKey;
  const unknown = generateApiKey();
  /** Every key sent; none may appear anywhere, nor their random part. */
  const secrets: string[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    log = captureLog('info');
    server = await startTestServer(
      database.handle,
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
      log.logger,
    );
    valid = await createKey(database.handle);
    revoked = await createKey(database.handle);
    const malformed = `nps_${'x'.repeat(20)}`;
    secrets.push(valid.key, revoked.key, unknown, malformed);

    const { url } = server;
    const sent: Response[] = [];
    for (const key of [valid.key, unknown, malformed, revoked.key]) {
      sent.push(await fetch(`${url}/api/demo@me`, { headers: { authorization: `Bearer ${key}` } }));
      sent.push(
        await fetch(`${url}/api/owner-check?email=maker@example.com&name=demo@me`, { headers: { 'x-api-key': key } }),
      );
      sent.push(
        await fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' }),
        }),
      );
      sent.push(await fetch(`${url}/api/demo@me?api_key=${key}`));
      await new Promise<void>((resolve) => {
        const client = createWsClient({
          url: `${url.replace(/^http/, 'ws')}/graphql`,
          webSocketImpl: WebSocket,
          retryAttempts: 0,
          connectionParams: { apiKey: key },
          on: { closed: () => resolve() },
        });
        client.subscribe(
          { query: '{ profile(name: "demo@me") { name } }' },
          { next: () => {}, error: () => resolve(), complete: () => void client.dispose() },
        );
      });
    }
    await revokeApiKey(database.handle.db, revoked.id);
    sent.push(await fetch(`${url}/api/demo@me`, { headers: { authorization: `Bearer ${revoked.key}` } }));
    const bodies = await Promise.all(sent.map((response) => response.text()));
    expect(new Set(sent.map((response) => response.status))).toEqual(new Set([200, 400, 401]));
    for (const body of bodies) expectNoKey(body);
    await server.app.tracing?.flush();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  function expectNoKey(text: string): void {
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(4, 24));
    }
  }

  it('in the logs at info, which name the valid key by its id', () => {
    const text = log.lines.map((line) => JSON.stringify(line)).join('\n');
    expectNoKey(text);
    const keyed = log.lines.filter((line) => line.msg === 'request' && line.apiKey === valid.id);
    expect(keyed.length).toBeGreaterThanOrEqual(3);
  });

  it('in the traces', async () => {
    const spans = await receiver.spans();
    expect(spans.length).toBeGreaterThan(0);
    expectNoKey(receiver.exports.map((exported) => exported.body.toString('utf8')).join('\n'));
  });

  it('in /metrics', async () => {
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('http_requests_total');
    expectNoKey(metrics);
  });

  it.runIf(kind === 'postgres')('in the database (pg_dump), which holds the hashes', () => {
    if (PG_DUMP === undefined) throw new Error('pg_dump is missing: apt-get install postgresql-client-15');
    const url = database.testDb.url ?? '';
    const dump = execFileSync(PG_DUMP, ['--data-only', '--table=api_keys', url], { encoding: 'utf8' });
    expect(dump).toContain(valid.id);
    expectNoKey(dump);
    expectNoKey(execFileSync(PG_DUMP, [url], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
  });

  it.runIf(kind === 'pglite')("in the embedded database's files, which hold the hashes", async () => {
    await database.handle.db.execute(sql`checkpoint`);
    const folder = database.testDb.dataDir;
    expect(existsSync(folder)).toBe(true);
    const files = filesUnder(folder);
    expect(files.some((file) => file.includes(valid.id))).toBe(true);
    for (const file of files) {
      for (const secret of secrets) expect(file.includes(secret.slice(4, 24))).toBe(false);
    }
  });
});
