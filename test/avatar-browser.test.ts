/**
 * The initials avatar in a real browser (headless Chromium): opened directly, the SVG renders
 * under its own Content-Security-Policy without a violation or script error; drawn into a
 * canvas it has the size asked for, the name's background colour, and a glyph in the middle
 * that matches the initial better than any other letter. And a profile's own image, fetched and
 * resized by the service: an `<img>` of `avatarUrl(size: 64)` shows it 64 pixels wide, turned by
 * its EXIF orientation. Screenshots of what the browser shows are saved under test-results/
 * (gitignored) to look at.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { avatarColour } from '../src/profiles/avatar-svg.js';
import { startTestServer } from './support/app-server.js';
import { reportOnFailure, TEST_RESULTS_DIR, type TestBrowser, useBrowserSuite } from './support/browser.js';
import { ndjson } from './support/data-files.js';
import { serve, sidewaysJpeg, startImageOrigin } from './support/image-origin.js';

const TEST_TIMEOUT_MS = 60_000;

/** What the page measured of an avatar drawn into a canvas. */
interface Drawn {
  width: number;
  height: number;
  /** The colour of the top-left pixel, `#rrggbb`. */
  corner: string;
  /** Share of pixels that are (nearly) white: the glyph. */
  glyphShare: number;
  /** Centre of the glyph's bounding box, as a share of the width and height. */
  glyphCentre: [number, number];
  /** How well the glyph matches each candidate letter drawn by the same browser (IoU, 0 to 1). */
  similarity: Record<string, number>;
}

describe('the initials avatar in headless Chromium', () => {
  const suite = useBrowserSuite();
  let browser: TestBrowser | undefined;

  it.each([
    ['empty@me', 'E', 96, ['F', 'L', 'B', 'H', 'P']],
    ['юля@мир', 'Ю', 256, ['Ж', 'Н', 'О', 'Б', 'И']],
    ['9lives@me', '9', 48, ['6', '8', '0', '3', 'G']],
  ])(
    'shows %s as a square of its colour with the initial %s',
    async (name, initial, size, others) => {
      browser ??= await suite.launch();
      const page = await browser.newPage();
      reportOnFailure(browser, page, `avatar-${initial}`);
      const url = `${suite.server.url}/api/${encodeURIComponent(name)}/avatar?size=${size}`;

      // Opened directly: the document is the SVG, rendered under its own CSP without complaint.
      const messages: string[] = [];
      page.on('console', (message) => messages.push(message.text()));
      const response = await page.goto(url);
      expect(response?.status()).toBe(200);
      const root = await page.evaluate(() => ({
        element: document.documentElement.localName,
        text: document.documentElement.textContent,
        box: document.documentElement.getBoundingClientRect().toJSON() as { width: number; height: number },
        scripts: document.querySelectorAll('script').length,
      }));
      expect(root).toMatchObject({ element: 'svg', text: initial, box: { width: size, height: size }, scripts: 0 });
      mkdirSync(TEST_RESULTS_DIR, { recursive: true });
      await page.screenshot({ path: path.join(TEST_RESULTS_DIR, `avatar-${size}-${initial}.png`) });

      // Drawn into a canvas, from a page of the service (Chromium keeps about:blank from loopback).
      await page.goto(`${suite.server.url}/healthz`);
      const drawn: Drawn = await page.evaluate(measure, { url, initial, others });
      expect([drawn.width, drawn.height]).toEqual([size, size]);
      expect(drawn.corner).toBe(avatarColour(name));
      expect(drawn.glyphShare).toBeGreaterThan(0.03);
      expect(drawn.glyphShare).toBeLessThan(0.5);
      for (const centre of drawn.glyphCentre) expect(Math.abs(centre - 0.5)).toBeLessThan(0.12);
      const best = Object.entries(drawn.similarity).sort((a, b) => b[1] - a[1])[0];
      expect(best?.[0], JSON.stringify(drawn.similarity)).toBe(initial);
      expect(drawn.similarity[initial]).toBeGreaterThan(0.85);
      expect(browser.pageErrors).toEqual([]);
      expect(messages.filter((text) => /Content.Security.Policy|Refused/i.test(text))).toEqual([]);
      await page.close();
    },
    TEST_TIMEOUT_MS,
  );
});

describe("a profile's image in headless Chromium", () => {
  const suite = useBrowserSuite();

  it(
    'shows an <img> of avatarUrl(size: 64) 64 pixels wide, as WebP, turned by its EXIF orientation',
    async () => {
      const origin = await startImageOrigin('127.0.0.1');
      origin.route('/photo.jpg', serve(await sidewaysJpeg()));
      const line = {
        kind: 'profile',
        name: 'browser-pic@me',
        creatorEmail: 'x@example.com',
        image: `${origin.url}/photo.jpg`,
      };
      expect((await importLines(suite.handle.db, ndjson(line))).problems).toEqual([]);
      const server = await startTestServer(suite.handle, {
        AVATAR_PROXY: 'on',
        AVATAR_PRIVATE_ORIGINS: '127.0.0.1/32',
        // Bounds this test is not about, out of reach of a loaded machine.
        AVATAR_FETCH_TIMEOUT_MS: '60000',
        AVATAR_RESIZES_PER_SECOND: '0',
        PROFILE_CACHE_SIZE: '0',
      });
      const browser = await suite.launch();
      try {
        const page = await browser.newPage();
        reportOnFailure(browser, page, 'avatar-image-64');
        const query = '{ profile(name: "browser-pic@me") { avatarUrl(size: 64) } }';
        const graphql = await fetch(`${server.url}/graphql?query=${encodeURIComponent(query)}`);
        const { data } = (await graphql.json()) as { data: { profile: { avatarUrl: string } } };
        // avatarUrl starts with PUBLIC_URL; this server listens on a port chosen at start.
        const url = `${server.url}${new URL(data.profile.avatarUrl).pathname}${new URL(data.profile.avatarUrl).search}`;
        const types: string[] = [];
        page.on('response', (response) => {
          if (response.url() === url) types.push(response.headers()['content-type'] ?? '');
        });
        await page.goto(`${server.url}/healthz`);
        const shown = await page.evaluate(async (src) => {
          const image = document.createElement('img');
          image.src = src;
          document.body.append(image);
          await image.decode();
          const canvas = document.createElement('canvas');
          canvas.width = image.naturalWidth;
          canvas.height = image.naturalHeight;
          const context = canvas.getContext('2d');
          context?.drawImage(image, 0, 0);
          const pixel = (x: number, y: number) => [...(context?.getImageData(x, y, 1, 1).data ?? [])].slice(0, 3);
          return {
            natural: [image.naturalWidth, image.naturalHeight],
            rendered: image.getBoundingClientRect().width,
            top: pixel(32, 4),
            bottom: pixel(32, 60),
          };
        }, url);
        mkdirSync(TEST_RESULTS_DIR, { recursive: true });
        await page.screenshot({ path: path.join(TEST_RESULTS_DIR, 'avatar-image-64.png') });
        expect(shown.natural).toEqual([64, 64]);
        expect(shown.rendered).toBe(64);
        expect(types).toEqual(['image/webp']);
        // Stored sideways with red on the left; shown upright with red on top, blue below.
        expect(shown.top[0]).toBeGreaterThan(200);
        expect(shown.bottom[2]).toBeGreaterThan(200);
        expect(browser.pageErrors).toEqual([]);
        await page.close();
      } finally {
        await server.close();
        await origin.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});

/**
 * Runs in the page: loads the avatar into a canvas, finds the white glyph, and compares it with
 * each candidate letter drawn in the same font by the same browser, after cropping both to their
 * bounding boxes and scaling them to one grid (so font metrics and offsets do not matter).
 */
async function measure({ url, initial, others }: { url: string; initial: string; others: string[] }): Promise<Drawn> {
  const GRID = 24;
  const image = new Image();
  image.crossOrigin = 'anonymous';
  image.src = url;
  await image.decode();
  const width = image.naturalWidth;
  const height = image.naturalHeight;

  const canvasOf = (draw: (context: CanvasRenderingContext2D) => void) => {
    const canvas = document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
    const context = canvas.getContext('2d', { willReadFrequently: true });
    if (context === null) throw new Error('no 2d context');
    draw(context);
    return context.getImageData(0, 0, width, height).data;
  };
  /** The glyph (light pixels) cropped to its bounding box and scaled to GRID×GRID. */
  const glyphOf = (pixels: Uint8ClampedArray) => {
    let [minX, minY, maxX, maxY, count] = [width, height, -1, -1, 0];
    const light = (x: number, y: number) => {
      const at = (y * width + x) * 4;
      return (pixels[at] ?? 0) > 180 && (pixels[at + 1] ?? 0) > 180 && (pixels[at + 2] ?? 0) > 180;
    };
    for (let y = 0; y < height; y += 1) {
      for (let x = 0; x < width; x += 1) {
        if (!light(x, y)) continue;
        count += 1;
        [minX, minY, maxX, maxY] = [Math.min(minX, x), Math.min(minY, y), Math.max(maxX, x), Math.max(maxY, y)];
      }
    }
    const grid: boolean[] = [];
    for (let gy = 0; gy < GRID; gy += 1) {
      for (let gx = 0; gx < GRID; gx += 1) {
        const x = Math.round(minX + ((gx + 0.5) / GRID) * (maxX - minX));
        const y = Math.round(minY + ((gy + 0.5) / GRID) * (maxY - minY));
        grid.push(count > 0 && light(x, y));
      }
    }
    return { count, grid, centre: [(minX + maxX) / 2 / width, (minY + maxY) / 2 / height] as [number, number] };
  };
  const iou = (a: boolean[], b: boolean[]) => {
    const both = a.filter((value, index) => value && b[index]).length;
    const either = a.filter((value, index) => value || b[index]).length;
    return either === 0 ? 0 : both / either;
  };

  const avatarPixels = canvasOf((context) => context.drawImage(image, 0, 0));
  const glyph = glyphOf(avatarPixels);
  const font = getComputedStyle(document.body).fontFamily || 'sans-serif';
  const similarity: Record<string, number> = {};
  for (const letter of [initial, ...others]) {
    const reference = glyphOf(
      canvasOf((context) => {
        context.fillStyle = '#000000';
        context.fillRect(0, 0, width, height);
        context.fillStyle = '#ffffff';
        context.font = `600 ${width / 2}px system-ui, ${font}`;
        context.textAlign = 'center';
        context.textBaseline = 'middle';
        context.fillText(letter, width / 2, height / 2);
      }),
    );
    similarity[letter] = iou(glyph.grid, reference.grid);
  }
  const hex = (value: number | undefined) => (value ?? 0).toString(16).padStart(2, '0');
  return {
    width,
    height,
    corner: `#${hex(avatarPixels[0])}${hex(avatarPixels[1])}${hex(avatarPixels[2])}`,
    glyphShare: glyph.count / (width * height),
    glyphCentre: glyph.centre,
    similarity,
  };
}
