/**
 * Map entries keep the order the operator gave them, also when a key looks like a number:
 * JavaScript objects list `"2024"` before `"Blog"`, so a value that passed through a plain
 * object came back reordered. Checked end to end: import, REST body, GraphQL `entries` and
 * `raw`, export, and re-import.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { orderedObject, parseJsonKeepingOrder } from '../src/profiles/record-value.js';
import type { TestServer } from './support/app-server.js';
import { startTestServer } from './support/app-server.js';
import { emptyDatabase, exportText } from './support/data-files.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';

/** Written out by hand: the order of the file is the order that must come back. */
const LINK = '{"Blog":"https://blog.example","2024":"https://2024.example","Shop":"https://shop.example","7":"x"}';
const NOTES = '{"10":"ten","9":"nine","0":"zero"}';
const LINES = [
  '{"kind":"namespace","name":"order","ownerEmail":"owner@example.com"}',
  `{"kind":"profile","name":"keys@order","creatorEmail":"maker@example.com","records":{"1":{"type":"name","value":"Keys"},"7":{"type":"link","value":${LINK}},"9":{"type":"notes","value":${NOTES}},"8":{"type":"crypto","value":{"eth":"0xabc","1":"one"}}}}`,
];

describe('parseJsonKeepingOrder', () => {
  it('keeps the source order of every object, and agrees with JSON.parse on everything else', () => {
    const key = fc.oneof(fc.string({ maxLength: 4 }), fc.nat({ max: 3000 }).map(String));
    const value = fc.dictionary(key, fc.oneof(fc.string(), fc.dictionary(key, fc.string())));
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(key, value), { selector: ([k]) => k, maxLength: 6 }), (entries) => {
        const text = `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
        const parsed = parseJsonKeepingOrder(text) as Record<string, unknown>;
        expect(Object.keys(parsed)).toEqual(entries.map(([k]) => k));
        expect(JSON.parse(JSON.stringify(parsed))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('serialises an ordered object in its order, and reads like a plain object', () => {
    const ordered = orderedObject([
      ['Blog', 'b'],
      ['2024', 'y'],
    ]);
    expect(JSON.stringify(ordered)).toBe('{"Blog":"b","2024":"y"}');
    expect(Object.entries(ordered)).toEqual([
      ['Blog', 'b'],
      ['2024', 'y'],
    ]);
    expect(ordered['2024']).toBe('y');
    expect(Object.hasOwn(ordered, 'Blog')).toBe(true);
  });
});

describe.each(databaseKinds())('map entries in stored order, on %s', (kind) => {
  const database = useTestDatabase(kind);
  let server: TestServer;

  beforeAll(async () => {
    await emptyDatabase(database.handle.db);
    expect((await importLines(database.handle.db, LINES)).ok).toBe(true);
    server = await startTestServer(database.handle, { PROFILE_LIMIT: '0' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers REST with the entries in the order of the file', async () => {
    const text = await (await fetch(`${server.url}/api/keys@order`)).text();
    expect(text).toContain(`"value":${LINK}`);
    expect(text).toContain(`"value":${NOTES}`);
    expect(text).toContain('"value":{"eth":"0xabc","1":"one"}');
  });

  it('answers GraphQL entries and raw in the same order', async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `{ profile(name: "keys@order") { records { key raw ... on MapRecord { entries { key } } ... on CryptoRecord { entries { key } } } } }`,
      }),
    });
    const text = await response.text();
    expect(text).toContain(`"raw":${LINK}`);
    const { data } = JSON.parse(text) as {
      data: { profile: { records: Array<{ key: string; entries?: Array<{ key: string }> }> } };
    };
    // Every record once, in key order, also the one read before the map that needs the slower reading.
    expect(data.profile.records.map((record) => record.key)).toEqual(['1', '7', '8', '9']);
    const entries = Object.fromEntries(
      data.profile.records.flatMap(({ key, entries }) =>
        entries === undefined ? [] : [[key, entries.map((entry) => entry.key)]],
      ),
    );
    expect(entries).toEqual({ '7': ['Blog', '2024', 'Shop', '7'], '8': ['eth', '1'], '9': ['10', '9', '0'] });
  });

  it('exports the entries in the same order, and a re-import of the export changes nothing', async () => {
    const exported = await exportText(database.handle.db);
    expect(exported).toContain(`"value":${LINK}`);
    const again = await importLines(database.handle.db, exported.split('\n'));
    expect(again).toMatchObject({ ok: true, profilesChanged: 0, namespacesChanged: 0 });
  });
});
