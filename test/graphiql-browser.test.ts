/**
 * GraphiQL in a real browser (headless Chromium): `/graphql` opens with the example query, runs
 * it, and shows the schema's docs, with every request the page makes (stylesheet, script,
 * Monaco's workers, favicon, introspection, the query) answered by the service itself, so it
 * works offline and behind a firewall.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { launchChromium, reportOnFailure, type TestBrowser, visibleText } from './support/browser.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';

/** Loading ~9 MB of script and starting Monaco takes a few seconds on a busy two-core machine. */
const UI_TIMEOUT_MS = 30_000;
const TEST_TIMEOUT_MS = 4 * UI_TIMEOUT_MS;

describe('GraphiQL in headless Chromium', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  let browser: TestBrowser | undefined;

  beforeAll(async () => {
    // The page under test is the same on every database kind; PGlite is enough.
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await seedDemoData(handle.db);
    server = await startTestServer(handle);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it(
    'opens with the example query, runs it and shows the docs, using only this server',
    async () => {
      // In the test rather than beforeAll, so that a missing Chromium counts as this test failing.
      browser = await launchChromium();
      const page = await browser.newPage();
      reportOnFailure(browser, page, 'graphiql-browser');
      // Not waiting for the load event: a page that reaches for an unreachable host would hang there.
      await page.goto(`${server.url}/graphql`, { waitUntil: 'commit' });

      const queryEditor = '.graphiql-query-editor .view-line';
      await expect
        .poll(() => visibleText(page, queryEditor), { timeout: UI_TIMEOUT_MS })
        .toContain('profile(name: "demo@me")');
      expect(await visibleText(page, queryEditor)).toContain('query Example {');

      await page.getByRole('button', { name: /^Execute query/ }).click();
      const resultPane = '.graphiql-response .view-line';
      await expect.poll(() => visibleText(page, resultPane), { timeout: UI_TIMEOUT_MS }).toContain('"name": "demo@me"');
      expect(await visibleText(page, resultPane)).not.toContain('"errors"');

      // The discovery examples, a tab each; the wallet one answers with demo@me's wallets and chains.
      for (const tab of ['Search', 'Wallet', 'NameCheck']) {
        await expect.poll(() => page.getByRole('tab', { name: tab, exact: true }).count()).toBe(1);
      }
      const walletTab = page.getByRole('button', { name: 'Wallet', exact: true });
      // GraphiQL's reorderable tabs (framer-motion) can take the first click after loading for
      // the start of a drag; a person clicks again, and so does the test.
      await expect
        .poll(
          async () => {
            await walletTab.click();
            return visibleText(page, queryEditor);
          },
          { timeout: UI_TIMEOUT_MS },
        )
        .toContain('profilesByWallet');
      // Run until the answer shows: right after a tab switch GraphiQL may still send the previous
      // tab's operation name for a moment ("Cannot infer operation Example").
      await expect
        .poll(
          async () => {
            await page.getByRole('button', { name: /^Execute query/ }).click();
            return visibleText(page, resultPane);
          },
          { timeout: UI_TIMEOUT_MS, interval: 1000 },
        )
        .toContain('"chain": "eip155:1"');
      expect(await visibleText(page, resultPane)).not.toContain('"errors"');

      await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
      const docs = page.locator('.graphiql-doc-explorer');
      await docs.getByRole('link', { name: 'Query', exact: true }).click();
      await expect.poll(() => docs.locator('.graphiql-doc-explorer-title').textContent()).toBe('Query');
      expect(await docs.textContent()).toContain('ownerCheck');

      const origin = new URL(server.url).origin;
      const urls = browser.requests.map((request) => request.url());
      expect(urls.filter((url) => new URL(url).origin !== origin)).toEqual([]);
      // Monaco's three workers (the JSON one serves several editors) load from same-origin URLs.
      const workers = new Set(urls.filter((url) => /\/graphiql\/[\w.]*worker\.[0-9a-f]+\.js$/.test(url)));
      expect(workers.size).toBe(3);
      expect(browser.failedRequests).toEqual([]);
      expect(browser.pageErrors).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
