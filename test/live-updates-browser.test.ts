/**
 * The REST event stream in a real browser: a page on another origin (CORS) opens
 * `new EventSource('/api/{name_id}/events')` in headless Chromium and receives `profile` with
 * exactly the `/api/{name_id}` document after an import, then `deleted` after a removal.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { newChangeId, notifyProfileChanges } from '../src/db/change-notifications.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import { profiles } from '../src/db/schema.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { launchChromium, reportOnFailure, type TestBrowser } from './support/browser.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';

const NAMESPACE = { kind: 'namespace', name: 'web', ownerEmail: 'web-owner@example.com' };
const profile = (description: string) => ({
  kind: 'profile',
  name: 'page@web',
  creatorEmail: 'page@example.org',
  description,
  records: { '1': { type: 'name', value: 'Päge' } },
});

/** A page that listens to the stream and keeps what it hears in `window.heard`. */
const PAGE = (serviceUrl: string) => `<!doctype html><meta charset="utf-8"><title>events</title><script>
  window.heard = [];
  const source = new EventSource(${JSON.stringify(`${serviceUrl}/api/page@web/events`)});
  source.onopen = () => window.heard.push({ type: 'open' });
  source.addEventListener('profile', (event) => window.heard.push({ type: 'profile', data: event.data }));
  source.addEventListener('deleted', (event) => window.heard.push({ type: 'deleted', data: event.data }));
  source.onerror = () => window.heard.push({ type: 'error' });
</script>`;

interface Heard {
  type: string;
  data?: string;
}

describe('EventSource in headless Chromium', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let pageServer: http.Server;
  let browser: TestBrowser | undefined;

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await importLines(handle.db, ndjson(NAMESPACE, profile('Before')));
    server = await startTestServer(handle);
    pageServer = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(PAGE(server.url));
    });
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await browser?.close();
    pageServer?.close();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('receives event: profile with the /api document, then event: deleted', async () => {
    browser = await launchChromium();
    const page = await browser.newPage();
    reportOnFailure(browser, page, 'live-updates-eventsource');
    await page.goto(`http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`);
    const heard = () => page.evaluate(() => (window as unknown as { heard: Heard[] }).heard);
    await page.waitForFunction(() => (window as unknown as { heard: Heard[] }).heard.length > 0);
    await eventually(() => server.app.live.stats().open.rest === 1, { what: 'the subscription', withinMs: 5000 });

    await importLines(handle.db, ndjson(profile('Seen in a browser')));
    await page.waitForFunction(() => (window as unknown as { heard: Heard[] }).heard.some((e) => e.type === 'profile'));
    const document = await (await fetch(`${server.url}/api/page@web`)).text();

    await handle.db.transaction(async (tx) => {
      await tx.delete(profiles).where(sql`${profiles.name} = 'page@web'`);
      await notifyProfileChanges(tx, newChangeId(), ['page@web']);
    });
    await page.waitForFunction(() => (window as unknown as { heard: Heard[] }).heard.some((e) => e.type === 'deleted'));
    expect(await heard()).toEqual([
      { type: 'open' },
      { type: 'profile', data: document },
      { type: 'deleted', data: '{"name":"page@web"}' },
    ]);
    expect(browser.pageErrors).toEqual([]);
  }, 60_000);
});
