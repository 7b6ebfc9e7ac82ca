/**
 * The OpenAPI document at /api/openapi.json against real answers: every documented status of both
 * paths is produced for real and its body validated with Ajv (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1), and every status the tests produce is documented.
 */

import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { openDatabase } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';

interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    { get: { responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }> } }
  >;
}

const PROFILE_PATH = '/api/{name_id}';
const OWNER_CHECK_PATH = '/api/owner-check';
const SEARCH_PATH = '/api/search';
const WALLET_PATH = '/api/wallet/{address}';
const DEMO_ETH = '0x0000000000000000000000000000000000de0000';

describe('OpenAPI document', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let limited: TestServer;
  let document: OpenApiDocument;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const produced = new Set<string>();

  /** Validates a real answer against the document's schema for that path and status. */
  async function check(path: string, response: Response): Promise<void> {
    const status = String(response.status);
    produced.add(`${path} ${status}`);
    const documented = document.paths[path]?.get.responses[status];
    expect(documented, `${path} ${status} is documented`).toBeDefined();
    const text = await response.text();
    if (documented!.content === undefined) {
      expect(text).toBe('');
      return;
    }
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const pointer = `openapi.json#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/get/responses/${status}/content/application~1json/schema`;
    const validate = ajv.getSchema(pointer);
    expect(validate, pointer).toBeDefined();
    const valid = validate!(JSON.parse(text));
    expect(validate!.errors ?? [], `${path} ${status}: ${text}`).toEqual([]);
    expect(valid).toBe(true);
    for (const header of Object.keys(documented!.headers ?? {})) {
      expect(response.headers.get(header), `${path} ${status} header ${header}`).not.toBeNull();
    }
  }

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await seedDemoData(handle.db);
    server = await startTestServer(handle, { OWNER_CHECK_LIMIT: '1', PROFILE_LIMIT: '1000' });
    limited = await startTestServer(handle, { PROFILE_LIMIT: '1' });
    document = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as OpenApiDocument;
    ajv.addSchema(document, 'openapi.json');
  });
  afterAll(async () => {
    await server?.close();
    await limited?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('is an OpenAPI 3.1 document', () => {
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(document.paths)).toEqual([OWNER_CHECK_PATH, SEARCH_PATH, WALLET_PATH, PROFILE_PATH]);
  });

  it('describes every answer of the profile lookup', async () => {
    const ok = await fetch(`${server.url}/api/demo@me`);
    const etag = ok.headers.get('etag')!;
    await check(PROFILE_PATH, ok);
    await check(PROFILE_PATH, await fetch(`${server.url}/api/demo@me`, { headers: { 'If-None-Match': etag } }));
    await check(PROFILE_PATH, await fetch(`${server.url}/api/not-a-name`));
    await check(PROFILE_PATH, await fetch(`${server.url}/api/nobody@me`));
    await check(PROFILE_PATH, await fetch(`${server.url}/api/demo@me`, { method: 'DELETE' }));
    await fetch(`${limited.url}/api/demo@me`);
    await check(PROFILE_PATH, await fetch(`${limited.url}/api/demo@me`));
  });

  it('describes every answer of the owner check', async () => {
    await check(OWNER_CHECK_PATH, await fetch(`${server.url}/api/owner-check?email=a@example.com&name=demo@me`));
    await check(OWNER_CHECK_PATH, await fetch(`${server.url}/api/owner-check?email=a@example.com&name=demo@me`));
    const fresh = await startTestServer(handle, { OWNER_CHECK_LIMIT: '5' });
    try {
      await check(OWNER_CHECK_PATH, await fetch(`${fresh.url}/api/owner-check?email=a@example.com`));
    } finally {
      await fresh.close();
    }
  });

  it('describes every answer of the prefix search and the reverse lookup', async () => {
    for (const [path, url] of [
      [SEARCH_PATH, '/api/search?prefix=de&limit=1'],
      [WALLET_PATH, `/api/wallet/${DEMO_ETH}`],
    ] as const) {
      const ok = await fetch(`${server.url}${url}`);
      const etag = ok.headers.get('etag')!;
      await check(path, ok);
      await check(path, await fetch(`${server.url}${url}`, { headers: { 'If-None-Match': etag } }));
      await check(path, await fetch(`${server.url}${url}`, { method: 'DELETE' }));
      await fetch(`${limited.url}${url}`);
      await check(path, await fetch(`${limited.url}${url}`));
    }
    await check(SEARCH_PATH, await fetch(`${server.url}/api/search?prefix=-`));
    await check(WALLET_PATH, await fetch(`${server.url}/api/wallet/${DEMO_ETH}?limit=0`));
  });

  it('describes 503 while the database cannot be reached', async () => {
    // A PostgreSQL URL on a loopback port where nothing listens.
    const unreachable = await openDatabase({
      url: 'postgres://postgres@127.0.0.1:1/none',
      dataDir: '',
      connectTimeoutSeconds: 1,
    });
    const down = await startTestServer(unreachable, { OWNER_CHECK_LIMIT: '5' });
    try {
      await check(PROFILE_PATH, await fetch(`${down.url}/api/demo@me`));
      await check(OWNER_CHECK_PATH, await fetch(`${down.url}/api/owner-check?email=a@example.com&name=demo@me`));
      await check(SEARCH_PATH, await fetch(`${down.url}/api/search?prefix=de`));
      await check(WALLET_PATH, await fetch(`${down.url}/api/wallet/${DEMO_ETH}`));
    } finally {
      await down.close();
      await unreachable.close();
    }
  });

  it('describes 500 when the database fails otherwise', async () => {
    // A closed embedded database fails every query with an error that is not an outage.
    const broken = await createTestDatabase('pglite');
    const brokenHandle = await broken.open();
    const app = await startTestServer(brokenHandle, { OWNER_CHECK_LIMIT: '5' });
    await brokenHandle.close();
    try {
      await check(PROFILE_PATH, await fetch(`${app.url}/api/demo@me`));
      await check(OWNER_CHECK_PATH, await fetch(`${app.url}/api/owner-check?email=a@example.com&name=demo@me`));
      await check(SEARCH_PATH, await fetch(`${app.url}/api/search?prefix=de`));
      await check(WALLET_PATH, await fetch(`${app.url}/api/wallet/${DEMO_ETH}`));
    } finally {
      await app.close();
      await broken.drop();
    }
  });

  it('leaves no documented status unproduced', () => {
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item.get.responses).map((status) => `${path} ${status}`),
    );
    expect([...produced].sort()).toEqual(documented.sort());
  });
});
