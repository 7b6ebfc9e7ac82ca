/**
 * GraphiQL in a real browser (headless Chromium): `/graphql` opens with the example query, runs
 * it, and shows the schema's docs, with every request the page makes (stylesheet, script,
 * Monaco's workers, favicon, introspection, the query) answered by the service itself, so it
 * works offline and behind a firewall. Later visits in the same browser profile open on the
 * runnable example again, with the tabs of earlier visits kept (src/graphql/graphiql/graphiql-options.ts).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import {
  reportOnFailure,
  TEST_RESULTS_DIR,
  type TestBrowser,
  useBrowserSuite,
  visibleText,
} from './support/browser.js';
import { ndjson } from './support/data-files.js';

/** Loading ~9 MB of script and starting Monaco takes a few seconds on a busy two-core machine. */
const UI_TIMEOUT_MS = 30_000;
const TEST_TIMEOUT_MS = 4 * UI_TIMEOUT_MS;

const QUERY_EDITOR = '.graphiql-query-editor .view-line';
const RESULT_PANE = '.graphiql-response .view-line';
/** The variables editor; the headers editor beside it shows no text while hidden. */
const VARIABLES_EDITOR = '.graphiql-editor-tool .view-line';

/**
 * Opens `/graphql` in a new tab of `browser` and waits until the query editor shows `text`. If
 * the test fails, the tab is saved as test-results/<name>.png (see reportOnFailure).
 */
async function openGraphiQL(browser: TestBrowser, url: string, text: string, name: string): Promise<Page> {
  const page = await browser.newPage();
  reportOnFailure(browser, page, name);
  // Not waiting for the load event: a page that reaches for an unreachable host would hang there.
  await page.goto(`${url}/graphql`, { waitUntil: 'commit' });
  await expect.poll(() => visibleText(page, QUERY_EDITOR), { timeout: UI_TIMEOUT_MS }).toContain(text);
  return page;
}

/** Runs the active tab until the result pane shows `text` (see below for why more than once). */
async function runUntil(page: Page, text: string): Promise<string> {
  await expect
    .poll(
      async () => {
        await page.getByRole('button', { name: /^Execute query/ }).click();
        return visibleText(page, RESULT_PANE);
      },
      { timeout: UI_TIMEOUT_MS, interval: 1000 },
    )
    .toContain(text);
  return visibleText(page, RESULT_PANE);
}

/** Switches to the tab named `name` until the editor shows `text` (see below for the retries). */
async function switchTab(page: Page, name: string, text: string): Promise<void> {
  const tab = page.getByRole('button', { name, exact: true });
  await expect
    .poll(
      async () => {
        await tab.click();
        return visibleText(page, QUERY_EDITOR);
      },
      { timeout: UI_TIMEOUT_MS },
    )
    .toContain(text);
}

/** The tabs as GraphiQL stored them in local storage: each one's query and variables. */
async function storedTabs(page: Page): Promise<Array<{ query: string; variables: string }>> {
  const stored = await page.evaluate(() => localStorage.getItem('graphiql:tabState'));
  const state = JSON.parse(stored ?? '{"tabs":[]}') as { tabs: Array<{ query?: string; variables?: string }> };
  return state.tabs.map((tab) => ({ query: tab.query ?? '', variables: tab.variables ?? '' }));
}

/**
 * Waits until GraphiQL has stored (half a second after a change) a tab whose query contains
 * `query` and whose variables contain `variables`. Leaving or reloading before that would drop
 * the change, as it would for a person who reloads within that half second.
 */
async function untilStored(page: Page, query: string, variables = ''): Promise<void> {
  await expect
    .poll(
      async () =>
        (await storedTabs(page)).some((tab) => tab.query.includes(query) && tab.variables.includes(variables)),
      { timeout: UI_TIMEOUT_MS },
    )
    .toBe(true);
}

/** Whether the tab GraphiQL shows is the one named `name`. */
async function isActiveTab(page: Page, name: string): Promise<boolean> {
  // The tab's own name includes its close button, which only the active tab shows.
  const title = page.getByRole('tab', { selected: true }).getByRole('button', { name, exact: true });
  return (await title.count()) === 1;
}

/** The names of the open tabs, in order. */
async function tabNames(page: Page): Promise<string[]> {
  return (await page.getByRole('tab').allInnerTexts()).map((name) => name.trim());
}

describe('GraphiQL in headless Chromium', () => {
  const suite = useBrowserSuite();
  let browser: TestBrowser;
  /** The second test's browser. */
  let returning: TestBrowser;

  it(
    'opens with the example query, runs it and shows the docs, using only this server',
    async () => {
      browser = await suite.launch();
      const page = await browser.newPage();
      reportOnFailure(browser, page, 'graphiql-browser');
      // Not waiting for the load event: a page that reaches for an unreachable host would hang there.
      await page.goto(`${suite.server.url}/graphql`, { waitUntil: 'commit' });

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

      // The live-updates tab: the subscription runs (over SSE) and shows the event of a change.
      const watchTab = page.getByRole('button', { name: 'Watch', exact: true });
      await expect
        .poll(
          async () => {
            await watchTab.click();
            return visibleText(page, queryEditor);
          },
          { timeout: UI_TIMEOUT_MS },
        )
        .toContain('subscription Watch');
      await expect
        .poll(
          async () => {
            if (suite.server.app.live.stats().open.sse === 0) {
              await page.getByRole('button', { name: /^Execute (query|subscription)/ }).click();
            }
            return suite.server.app.live.stats().open.sse;
          },
          { timeout: UI_TIMEOUT_MS, interval: 1000 },
        )
        .toBe(1);
      const description = `Watched ${Date.now() % 100_000}`;
      await importLines(
        suite.handle.db,
        ndjson({ kind: 'profile', name: 'demo@me', creatorEmail: 'maker@example.com', description, level: 2 }),
      );
      await expect.poll(() => visibleText(page, resultPane), { timeout: UI_TIMEOUT_MS }).toContain(description);
      expect(await visibleText(page, resultPane)).toContain('"profileChanged"');

      await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
      const docs = page.locator('.graphiql-doc-explorer');
      await docs.getByRole('link', { name: 'Query', exact: true }).click();
      await expect.poll(() => docs.locator('.graphiql-doc-explorer-title').textContent()).toBe('Query');
      expect(await docs.textContent()).toContain('ownerCheck');

      const origin = new URL(suite.server.url).origin;
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

  it(
    'opens on the runnable examples on every later visit, keeping the tabs of earlier ones',
    async () => {
      // A browser of its own: one profile, fresh for this test, shared by all its visits.
      returning = await suite.launch();
      const examples = ['Example', 'Search', 'Wallet', 'NameCheck', 'Watch'];

      // First visit: a newcomer runs the example and leaves.
      const first = await openGraphiQL(returning, suite.server.url, 'query Example {', 'graphiql-first-visit');
      await runUntil(first, '"name": "demo@me"');
      await untilStored(first, 'query Example');
      await first.close();

      // Second visit: the examples, the first one open, no empty tab; they answer without errors.
      const second = await openGraphiQL(returning, suite.server.url, 'query Example {', 'graphiql-second-visit');
      expect(await tabNames(second)).toEqual(examples);
      expect(await isActiveTab(second, 'Example')).toBe(true);
      mkdirSync(TEST_RESULTS_DIR, { recursive: true });
      await second.screenshot({ path: path.join(TEST_RESULTS_DIR, 'graphiql-second-visit.png') });
      expect(await runUntil(second, '"name": "demo@me"')).not.toContain('"errors"');
      await switchTab(second, 'NameCheck', 'nameCheck(name: "Demo@ME")');
      expect(await runUntil(second, '"canonical": "demo@me"')).not.toContain('"errors"');
      // This time the developer writes and runs a query of their own, with variables, in a new tab.
      await second.getByRole('button', { name: 'New tab' }).click();
      await expect.poll(() => tabNames(second)).toContain('<untitled>');
      await second.locator('.graphiql-query-editor .monaco-editor').click();
      await second.keyboard.insertText('query Mine($name: String!) { profile(name: $name) { name description } }');
      await second.locator('.graphiql-editor-tool .monaco-editor').first().click();
      await second.keyboard.insertText('{"name": "demo@me"}');
      await expect.poll(() => tabNames(second), { timeout: UI_TIMEOUT_MS }).toContain('Mine');
      await runUntil(second, '"description"');
      // A reload keeps what is being edited: GraphiQL put it into the address bar (?query=).
      await untilStored(second, 'query Mine', '"demo@me"');
      await second.reload({ waitUntil: 'commit' });
      await expect.poll(() => visibleText(second, QUERY_EDITOR), { timeout: UI_TIMEOUT_MS }).toContain('query Mine');
      expect(await isActiveTab(second, 'Mine')).toBe(true);
      await second.close();

      // Third visit: the example is open again and runs; the own tab is kept, and its variables
      // (the last ones typed) did not make GraphiQL add a second example tab.
      const third = await openGraphiQL(returning, suite.server.url, 'query Example {', 'graphiql-third-visit');
      expect(await tabNames(third)).toEqual([...examples, 'Mine']);
      expect(await isActiveTab(third, 'Example')).toBe(true);
      expect(await runUntil(third, '"name": "demo@me"')).not.toContain('"errors"');
      await switchTab(third, 'Mine', 'query Mine');
      await expect
        .poll(() => visibleText(third, VARIABLES_EDITOR), { timeout: UI_TIMEOUT_MS })
        .toContain('{"name": "demo@me"}');
      await third.screenshot({ path: path.join(TEST_RESULTS_DIR, 'graphiql-third-visit.png') });

      // A page the test reloads or closes cancels what it was still loading (a Monaco worker,
      // say): net::ERR_ABORTED. Anything else is a failure.
      expect(returning.failedRequests.filter((failure) => !failure.endsWith('net::ERR_ABORTED'))).toEqual([]);
      expect(returning.pageErrors).toEqual([]);
    },
    2 * TEST_TIMEOUT_MS,
  );
});
