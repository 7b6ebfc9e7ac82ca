/**
 * The REST reference (`GET /api/docs`) in a real browser (headless Chromium) with every request
 * to another host refused: it shows every path of the OpenAPI document, a request tried from the
 * page shows the service's answer, and the page logs no error (a Content-Security-Policy
 * violation is one). Screenshots of the page go to test-results/ (gitignored) to be looked at.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ConsoleMessage, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  reportOnFailure,
  TEST_RESULTS_DIR,
  type TestBrowser,
  useBrowserSuite,
  visibleText,
} from './support/browser.js';

/** Loading and running a few megabytes of script on a two-core machine that other work keeps busy. */
const UI_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 4 * UI_TIMEOUT_MS;

interface OpenApiDocument {
  paths: Record<string, Record<string, { summary?: string }>>;
}

/** Opens `url` with requests to any other origin refused, and the page's console errors kept. */
async function openRefusingOtherHosts(
  browser: TestBrowser,
  url: string,
  name: string,
): Promise<{ page: Page; consoleErrors: string[]; refused: string[] }> {
  const origin = new URL(url).origin;
  const refused: string[] = [];
  await browser.context.route('**/*', (route) => {
    const target = route.request().url();
    if (new URL(target).origin === origin || target.startsWith('data:')) return route.continue();
    refused.push(target);
    return route.abort('blockedbyclient');
  });
  const page = await browser.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  reportOnFailure(browser, page, name);
  // Not waiting for the load event: a page that reaches for an unreachable host would hang there.
  await page.goto(url, { waitUntil: 'commit' });
  return { page, consoleErrors, refused };
}

async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(TEST_RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(TEST_RESULTS_DIR, `${name}.png`) });
}

describe('the REST reference in headless Chromium', () => {
  const suite = useBrowserSuite();

  it(
    'shows every path of the OpenAPI document, tries a request against the service, and reaches no other host',
    async () => {
      const browser = await suite.launch();
      const url = `${suite.server.url}/api/docs`;
      const { page, consoleErrors, refused } = await openRefusingOtherHosts(browser, url, 'api-reference-browser');
      const document = (await (await fetch(`${suite.server.url}/api/openapi.json`)).json()) as OpenApiDocument;
      const paths = Object.keys(document.paths);

      await expect
        .poll(() => visibleText(page, 'body'), { timeout: UI_TIMEOUT_MS })
        .toContain('Name profile service (REST)');
      await screenshot(page, 'api-reference-top');
      // Every path is on the page (Scalar draws each operation with its path).
      await expect
        .poll(
          async () => {
            const text = await visibleText(page, 'body');
            return paths.filter((documented) => !text.includes(documented));
          },
          { timeout: UI_TIMEOUT_MS },
        )
        .toEqual([]);

      // Try `GET /api/{name_id}` from the page, with the example the document gives (demo@me).
      await page.getByRole('link', { name: /^The public profile of a name ID HTTP Method:\s+GET$/ }).click();
      await page.locator('button', { hasText: /^Test Request\(get \/api\/\{name_id\}\)$/ }).click();
      const client = page.getByRole('dialog');
      await expect.poll(() => visibleText(page, '[role="dialog"]'), { timeout: UI_TIMEOUT_MS }).toContain('demo@me');
      await client.getByRole('button', { name: /^Send get request to / }).click();
      await expect
        .poll(() => visibleText(page, '[role="dialog"]'), { timeout: UI_TIMEOUT_MS })
        .toContain('"name": "demo@me"');
      expect(await visibleText(page, '[role="dialog"]')).toContain('200 OK');
      await screenshot(page, 'api-reference-answer');
      // The answer came from this service: the request reached it, not a proxy elsewhere.
      const tried = browser.requests.filter(
        (request) => decodeURIComponent(new URL(request.url()).pathname) === '/api/demo@me',
      );
      expect(tried.map((request) => request.method())).toContain('GET');

      expect(refused).toEqual([]);
      expect(browser.failedRequests).toEqual([]);
      expect(browser.pageErrors).toEqual([]);
      expect(consoleErrors).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'links to GraphiQL, which links back',
    async () => {
      const browser = await suite.launch();
      const url = `${suite.server.url}/api/docs`;
      const { page, consoleErrors, refused } = await openRefusingOtherHosts(browser, url, 'api-reference-graphiql');
      await expect
        .poll(() => visibleText(page, 'body'), { timeout: UI_TIMEOUT_MS })
        .toContain('Name profile service (REST)');
      await page.getByRole('link', { name: 'GraphQL explorer (GraphiQL)' }).click();
      await page.waitForURL(`${suite.server.url}/graphql`, { timeout: UI_TIMEOUT_MS });
      const back = page.getByRole('link', { name: 'REST API reference' });
      await back.waitFor({ timeout: UI_TIMEOUT_MS });
      await screenshot(page, 'graphiql-with-reference-link');
      await back.click();
      await page.waitForURL(url, { timeout: UI_TIMEOUT_MS });
      await expect
        .poll(() => visibleText(page, 'body'), { timeout: UI_TIMEOUT_MS })
        .toContain('Name profile service (REST)');
      expect(refused).toEqual([]);
      // Leaving a page cancels what it was still loading (GraphiQL starts its workers late).
      expect(browser.failedRequests.filter((failure) => !failure.endsWith('net::ERR_ABORTED'))).toEqual([]);
      expect(browser.pageErrors).toEqual([]);
      expect(consoleErrors).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
