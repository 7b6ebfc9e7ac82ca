/**
 * `GET /api/{name_id}/vcard` over a real socket, on every test database. Every vCard is parsed
 * back by ical.js, an independent, well-kept parser, never by our own code: its properties
 * must carry the profile's data exactly (escaping undone), its physical lines must be at most 75
 * octets of valid UTF-8 ending in CRLF, and empty values must be left out.
 */
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { foldLine } from '../src/profiles/vcard.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { runNode } from './support/run-node.js';

const PUBLIC_URL = 'https://names.test';
const VCARD_MODULE = new URL('../src/profiles/vcard.ts', import.meta.url).href;

const LONG_NOTE =
  'Línea uno, con comas; y punto y coma \\ y barra.\nLínea dos: 東京のイラストレーターです。' +
  ' Ünïcödé '.repeat(12) +
  ' 😀👨‍👩‍👧 end';

const FIXTURES = ndjson(
  { kind: 'namespace', name: 'vc', ownerEmail: 'owner@example.com' },
  {
    kind: 'profile',
    name: 'escapes@vc',
    creatorEmail: 'x@example.com',
    description: LONG_NOTE,
    image: 'javascript:alert(1)',
    records: {
      '1': { type: 'name', value: 'Doe, Jane; "JD" \\ Esq.' },
      '2': { type: 'email', value: 'jane@vc.example' },
      '3': { type: 'email', value: '' },
      '4': { type: 'phone', value: ' +1 555 0100 , ,+44 20 7946 0000,555-0199' },
      '5': { type: 'website', value: 'not a url' },
      '6': {
        type: 'social',
        value: {
          telegram: '@jane_tg',
          mastodon: '@jane@example.social',
          'my network; "odd":x': 'a,b;c',
          twitter: '',
          instagram: 'https://www.instagram.com/jane.pics',
        },
      },
      '7': { type: 'notes', value: { Bell: 'ring\u0007 twice' } },
      '50': { type: 'web_url', value: 'https://profiles.example.org/escapes@vc' },
    },
  },
  { kind: 'profile', name: 'controls@vc', creatorEmail: 'x@example.com', description: 'bell\u0007 escape\u001b-free' },
);

type JCardProperty = [name: string, params: Record<string, string | string[]>, type: string, ...values: unknown[]];

/** The properties of a vCard as ical.js reads them: name, parameters, value type and value(s). */
function parse(text: string): JCardProperty[] {
  const [kind, properties] = ICAL.parse(text) as unknown as [string, JCardProperty[]];
  expect(kind).toBe('vcard');
  return properties;
}

const valuesOf = (properties: JCardProperty[], name: string) =>
  properties.filter((property) => property[0] === name).map((property) => property[3]);

describe('vCard line folding', () => {
  it('keeps lines of up to 75 octets and folds longer ones between code points', () => {
    expect(foldLine('a'.repeat(75))).toBe('a'.repeat(75));
    for (const text of ['a'.repeat(200), 'é'.repeat(100), '😀'.repeat(60), `x${'東'.repeat(80)}`]) {
      const folded = foldLine(text);
      const lines = folded.split('\r\n');
      for (const line of lines) {
        const bytes = Buffer.from(line);
        expect(bytes.length).toBeLessThanOrEqual(75);
        expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes)).not.toThrow();
      }
      expect(lines.slice(1).every((line) => line.startsWith(' '))).toBe(true);
      expect(folded.replace(/\r\n /g, '')).toBe(text);
    }
  });

  it('folds a line of megabytes in memory linear in its size (a child process with a 48 MB heap)', async () => {
    // Building the folded line a character at a time needed over 200 MB for 4 million
    // characters (and seconds of event loop); a size bound, not a timing, decides this test.
    const script = [
      `import { foldLine } from ${JSON.stringify(VCARD_MODULE)};`,
      "const text = 'é'.repeat(4_000_000) + '😀'.repeat(500_000);",
      'const folded = foldLine(text);',
      "const lines = folded.split('\\r\\n');",
      'const longest = lines.reduce((most, line) => Math.max(most, Buffer.byteLength(line)), 0);',
      "console.log(JSON.stringify({ same: folded.replaceAll('\\r\\n ', '') === text, lines: lines.length, longest }));",
    ].join('\n');
    const result = await runNode(['--max-old-space-size=48', '--max-semi-space-size=4', '--import', 'tsx'], script);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { same: boolean; lines: number; longest: number };
    expect(summary.same).toBe(true);
    expect(summary.longest).toBeLessThanOrEqual(75);
    // 10 MB of UTF-8 in lines of 74 octets after the leading space: at least 135,000 of them.
    expect(summary.lines).toBeGreaterThan(135_000);
  }, 60_000);
});

describe.each(databaseKinds())('vCard on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;

  const vcard = (name: string, init: RequestInit = {}) =>
    fetch(`${server.url}/api/${encodeURIComponent(name)}/vcard`, init);
  const cardOf = async (name: string) => {
    const response = await vcard(name);
    expect(response.status, name).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    // Physical lines: at most 75 octets, valid UTF-8 each, CRLF-terminated.
    expect(bytes.subarray(-2).toString()).toBe('\r\n');
    for (const line of bytes.toString('latin1').split('\r\n').slice(0, -1)) {
      const raw = Buffer.from(line, 'latin1');
      expect(raw.length, line).toBeLessThanOrEqual(75);
      expect(() => new TextDecoder('utf-8', { fatal: true }).decode(raw)).not.toThrow();
      expect(raw.includes(0x0a) || raw.includes(0x0d)).toBe(false);
    }
    return { text: bytes.toString('utf8'), properties: parse(bytes.toString('utf8')), response };
  };

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    expect((await importLines(handle.db, FIXTURES)).problems).toEqual([]);
    server = await startTestServer(handle, { PUBLIC_URL, PROFILE_LIMIT: '100000' });
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  it('writes the demo profile as a vCard 4.0 that ical.js reads back', async () => {
    const { properties, response } = await cardOf('Demo@ME');
    expect(response.headers.get('content-type')).toBe('text/vcard; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="demo@me.vcf"');
    expect(properties).toEqual([
      ['version', {}, 'text', '4.0'],
      ['fn', {}, 'text', 'Demo Person'],
      ['nickname', {}, 'text', 'demo@me'],
      ['note', {}, 'text', 'A sample profile that shows every kind of record.'],
      ['photo', {}, 'uri', 'https://img.example.org/avatars/demo@me.jpg'],
      ['email', {}, 'text', 'hello@demo.example'],
      ['tel', {}, 'uri', 'tel:+15550100'],
      ['tel', {}, 'uri', 'tel:+15550111'],
      ['url', {}, 'uri', 'https://demo.example/'],
      ['url', {}, 'uri', 'https://profiles.example.org/demo@me'],
      ['x-socialprofile', { type: 'twitter' }, 'unknown', 'https://x.com/demo'],
      ['x-socialprofile', { type: 'discord' }, 'text', 'demo#0001'],
      ['x-socialprofile', { type: 'instagram' }, 'unknown', 'https://www.instagram.com/demo.pics'],
      ['source', {}, 'uri', `${PUBLIC_URL}/api/demo@me/vcard`],
    ]);
  });

  it('escapes text and folds long lines so that every value reads back exactly', async () => {
    const { properties, text } = await cardOf('escapes@vc');
    expect(text).toMatch(/\r\n /); // folded
    expect(valuesOf(properties, 'fn')).toEqual(['Doe, Jane; "JD" \\ Esq.']);
    expect(valuesOf(properties, 'note')).toEqual([LONG_NOTE]);
    expect(valuesOf(properties, 'photo')).toEqual([]); // not an http(s) URL
    expect(valuesOf(properties, 'email')).toEqual(['jane@vc.example']); // the empty one left out
    expect(properties.filter((property) => property[0] === 'tel')).toEqual([
      ['tel', {}, 'uri', 'tel:+1-555-0100'],
      ['tel', {}, 'uri', 'tel:+44-20-7946-0000'],
      ['tel', {}, 'text', '555-0199'],
    ]);
    expect(valuesOf(properties, 'url')).toEqual(['https://profiles.example.org/escapes@vc']);
    expect(properties.filter((property) => ['impp', 'x-socialprofile'].includes(property[0]))).toEqual([
      ['impp', { type: 'telegram' }, 'uri', 'https://t.me/jane_tg'],
      ['x-socialprofile', { type: 'mastodon' }, 'text', '@jane@example.social'],
      ['x-socialprofile', { 'x-service-type': 'my network; "odd":x' }, 'text', 'a,b;c'],
      ['x-socialprofile', { type: 'instagram' }, 'unknown', 'https://www.instagram.com/jane.pics'],
    ]);
  });

  it('leaves out empty values and falls back to the name ID for FN', async () => {
    for (const name of ['blank@me', 'empty@me']) {
      const { properties } = await cardOf(name);
      expect(properties.map((property) => property[0])).toEqual(['version', 'fn', 'nickname', 'source']);
      expect(valuesOf(properties, 'fn')).toEqual([name]);
    }
  });

  it('drops control characters, which a vCard may not hold', async () => {
    const { properties } = await cardOf('controls@vc');
    expect(valuesOf(properties, 'note')).toEqual(['bell escape-free']);
  });

  it('names a non-ASCII download with RFC 6266 filename* and an ASCII stand-in', async () => {
    const { response, properties } = await cardOf('zoë.müller@studio'.normalize('NFD'));
    const disposition = response.headers.get('content-disposition') ?? '';
    expect(disposition).toBe(
      `attachment; filename="zoe.muller@studio.vcf"; filename*=UTF-8''zo%C3%AB.m%C3%BCller%40studio.vcf`,
    );
    const encoded = /filename\*=UTF-8''(.+)$/.exec(disposition)?.[1] ?? '';
    expect(decodeURIComponent(encoded)).toBe('zoë.müller@studio.vcf');
    expect(valuesOf(properties, 'fn')).toEqual(['Zoë Müller']);
    const cyrillic = await vcard('алиса@мир');
    expect(cyrillic.headers.get('content-disposition')).toMatch(
      /^attachment; filename="_____@___\.vcf"; filename\*=UTF-8''%D0%B0/,
    );
  });

  it('sends a strong ETag and the profile Cache-Control, 304 for a matching If-None-Match, HEAD without a body', async () => {
    const first = await vcard('demo@me');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    const again = await vcard('demo@me', { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const head = await vcard('demo@me', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(etag);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(100);
    expect(await head.text()).toBe('');
  });

  it('answers 400 and 404 as the profile lookup does', async () => {
    const invalid = await vcard('not-a-name');
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ error: 'Invalid name format, expected <local>@<domain>' });
    const missing = await vcard('nobody@me');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'Profile not found' });
  });
});
