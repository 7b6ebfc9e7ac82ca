/**
 * A real headless browser for tests: Debian's Chromium driven through playwright-core (which
 * downloads no browser of its own). Each launch gets a fresh profile, so no cache, cookie or
 * local storage carries over between suites. On a test failure the page is saved as a screenshot
 * under test-results/ (gitignored) to show what a user would have seen.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page, type Request } from 'playwright-core';
import { afterAll, onTestFailed } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { type TestServer, useDemoServer } from './app-server.js';

/** Where Debian's package puts it; CHROMIUM_PATH overrides. */
const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Headless, no sandbox (tests run as root in CI), and none of the browser's own traffic (updates,
 * sync, field trials), so every request a test sees comes from the page under test.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const TEST_RESULTS_DIR = fileURLToPath(new URL('../../test-results', import.meta.url));

/** The Chromium binary to drive, or an error that says how to get one. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const executable = env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
  if (!existsSync(executable)) {
    throw new Error(
      `Browser tests need Chromium, and there is none at ${executable}. Install Debian's package ` +
        '(`apt-get install chromium`, as .ci/run does) or set CHROMIUM_PATH to a Chromium binary.',
    );
  }
  return executable;
}

export interface TestBrowser {
  context: BrowserContext;
  /** A new tab; its uncaught script errors are collected in `pageErrors`. */
  newPage(): Promise<Page>;
  /** Every request any page or worker of this browser made, in order. */
  requests: Request[];
  /** Requests that got no answer or an HTTP error, as `METHOD url: reason`. */
  failedRequests: string[];
  /** Uncaught exceptions of the pages' scripts, as `name: message`. */
  pageErrors: string[];
  close(): Promise<void>;
}

export async function launchChromium(): Promise<TestBrowser> {
  const executablePath = chromiumPath();
  const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'nps-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 800 },
    });
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw new Error(`cannot start Chromium at ${executablePath}`, { cause: error });
  }
  const requests: Request[] = [];
  const failedRequests: string[] = [];
  const pageErrors: string[] = [];
  context.on('request', (request) => requests.push(request));
  context.on('requestfailed', (request) =>
    failedRequests.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText ?? 'failed'}`),
  );
  context.on('response', (response) => {
    const request = response.request();
    if (response.status() >= 400)
      failedRequests.push(`${request.method()} ${request.url()}: HTTP ${response.status()}`);
  });
  context.on('page', (page) => page.on('pageerror', (error) => pageErrors.push(`${error.name}: ${error.message}`)));
  return {
    context,
    requests,
    failedRequests,
    pageErrors,
    newPage: () => context.newPage(),
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Call inside a test: if the test fails, saves a full-page screenshot of `page` as
 * test-results/<name>.png and prints, with its path, the requests that failed and the page's
 * uncaught errors, which usually say why.
 */
export function reportOnFailure(browser: TestBrowser, page: Page, name: string): void {
  onTestFailed(async ({ task }) => {
    mkdirSync(TEST_RESULTS_DIR, { recursive: true });
    const file = path.join(TEST_RESULTS_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
    const screenshot = await page.screenshot({ path: file, fullPage: true }).then(
      () => `screenshot of the page: ${file}`,
      (error: unknown) => `no screenshot: ${String(error)}`,
    );
    const lines = [
      `${task.name}: ${screenshot}`,
      `requests (${browser.requests.length}): ${browser.requests.map((request) => request.url()).join(' ')}`,
      `failed requests: ${browser.failedRequests.join('; ') || 'none'}`,
      `page errors: ${browser.pageErrors.join('; ') || 'none'}`,
    ];
    console.error(lines.join('\n'));
  });
}

/**
 * The rendered text of the elements `selector` matches, one per line, with the no-break spaces of
 * editors (Monaco) as plain spaces. Monaco renders only the lines in view.
 */
export async function visibleText(page: Page, selector: string): Promise<string> {
  const texts = await page.locator(selector).allInnerTexts();
  return texts.join('\n').replace(/\u00a0/g, ' ');
}

export interface BrowserSuite {
  /** The App the pages are opened on, with the demo data. */
  readonly server: TestServer;
  /** Its database, for tests that change the data the pages show. */
  readonly handle: DatabaseHandle;
  /** Starts a Chromium of its own, closed after the suite's tests. */
  launch(): Promise<TestBrowser>;
}

/**
 * For a suite of browser tests: the demo data served by an App (the pages are the same on every
 * database kind; PGlite is enough), and browsers to start. Start them in the tests rather than
 * beforeAll, so that a missing Chromium counts as a test failing; they are closed after the
 * suite's tests, so a failure can still be photographed.
 */
export function useBrowserSuite(): BrowserSuite {
  const demo = useDemoServer();
  const browsers: TestBrowser[] = [];
  afterAll(async () => {
    for (const browser of browsers.splice(0)) await browser.close();
  });
  return {
    get server() {
      return demo.server;
    },
    get handle() {
      return demo.handle;
    },
    async launch() {
      const browser = await launchChromium();
      browsers.push(browser);
      return browser;
    },
  };
}
