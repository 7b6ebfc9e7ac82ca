/**
 * Whatever is stored, every answer renders, on every test database.
 *
 * - What the importer accepts: profiles generated with hostile text (fast-check), imported, then
 *   requested in every format (REST JSON, batch, GraphQL with typed records, wallets and
 *   avatarUrl, vCard read by ical.js, WebFinger, avatar): never a 5xx, every body well-formed,
 *   and the values read back as stored (the vCard's as its escaping and control-character rule
 *   say).
 * - What other writers can store by hand-written SQL: a `json` record value keeps `\u` escapes
 *   that are not text (U+0000, lone surrogates), which JavaScript then reads as such; the
 *   answers must still render (a lone surrogate in a social handle made the vCard a 500).
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { sql } from '../src/db/drizzle.js';
import { canonicalName } from '../src/names/name-id.js';
import { MAP_RECORD_TYPES, phoneNumbers, STRING_RECORD_TYPES } from '../src/profiles/record-types.js';
import { namePath } from '../src/service/links.js';
import { useTestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { databaseKinds } from './support/databases.js';
import { type Answers, everyAnswer, type JCardProperty, type StoredRecord } from './support/every-answer.js';
import { hostileText } from './support/hostile-text.js';

const PUBLIC_URL = 'https://names.test/base';
const NAMESPACE = 'st';

/** Record values as other writers may store them: `json` text whose escapes are not text. */
const HAND_WRITTEN: Array<[key: number, type: string, json: string]> = [
  [1, 'name', '"\\ud800 Name\\u0000"'],
  [2, 'email', '"\\udfff@x.example"'],
  [3, 'website', '"https://site.example/\\ud800"'],
  [4, 'phone', '"+1 555\\u0000,\\ud800"'],
  [
    6,
    'social',
    '{"twitter":"\\ud800","telegram":"x\\udc00y","\\u0000k":"v","\\ud83d":"\\u0000","linkedin":"a\\ud800\\u0000"}',
  ],
  [8, 'crypto', '{"eth":"0x\\ud800","btc\\u0000":"x"}'],
  [9, 'notes', '{"Blog\\u0000":"\\udfff"}'],
  [50, 'web_url', '"https://pages.example/\\ud800\\u0000"'],
  [60, 'custom', '"\\ud800"'],
  [61, 'custom_map', '{"\\ud800":"\\udc00"}'],
];

/** Texts that break naive renderers: links with characters URLs leave raw, escapes, controls. */
const TRICKY = [
  'https://cdn.example/#\\',
  'https://cdn.example/a?q={x}|^`"<>',
  ' https://cdn.example/space ',
  'http://[::1]/',
  'https://ex\u00e4mple.example/ü?ä#ö',
  'https://a.example/\u0001\u007f',
  '+1 (555) 0100, +44 20 7946 0000,,555-0199',
  '@handle',
  'line\r\nbreak\rand\nmore',
  'comma, semicolon; colon: backslash \\ quote " caret ^',
  '\t\u0085\u2028\u2029\ufeff\ufffe\uffff',
  '😀👨‍👩‍👧e\u0301',
  '',
  ' ',
];

/** Texts the importer accepts (U+0000 is refused: import-export.test.ts), hostile ones mostly. */
const text = fc
  .oneof(
    { weight: 3, arbitrary: hostileText },
    { weight: 2, arbitrary: fc.constantFrom(...TRICKY) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  )
  .map((value) => value.replaceAll('\u0000', ''));
/** At most `max` characters of `text`, so that a type or a map key stays within its limit. */
const textUpTo = (max: number) => text.map((value) => [...value].slice(0, max).join(''));
const mapOf = fc
  .array(
    fc.tuple(fc.oneof(fc.constantFrom('twitter', 'telegram', 'LinkedIn', 'eth', 'btc', 'Blog'), textUpTo(128)), text),
    {
      maxLength: 5,
    },
  )
  .map((entries) => Object.fromEntries(entries));
const storedRecord: fc.Arbitrary<StoredRecord> = fc.oneof(
  fc.record({ type: fc.constantFrom(...STRING_RECORD_TYPES), value: text }),
  fc.record({ type: fc.constantFrom(...MAP_RECORD_TYPES), value: mapOf }),
  fc.record({ type: textUpTo(64).filter((type) => type !== ''), value: fc.oneof(text, mapOf) }),
);
/**
 * PGlite (0.5.16) drops a leading U+FEFF from every text value it returns (its TextDecoder takes
 * it for a byte order mark): the description and image start with something else here, and the
 * test below shows the loss.
 */
const notStartingWithFeff = (value: string) => value.replace(/^\ufeff+/, '');
const generatedProfile = fc.record({
  description: text.map(notStartingWithFeff),
  image: fc.oneof(text, fc.constantFrom(...TRICKY.filter((value) => value.includes('://')))).map(notStartingWithFeff),
  level: fc.nat(),
  records: fc.dictionary(fc.nat(200).map(String), storedRecord, { maxKeys: 8 }),
});

describe.each(databaseKinds())('every answer renders whatever is stored, on %s', (kind) => {
  const suite = useTestServer(
    kind,
    async (db) => {
      const report = await importLines(
        db,
        ndjson(
          { kind: 'namespace', name: NAMESPACE, ownerEmail: 'owner@example.com' },
          {
            kind: 'profile',
            name: `written@${NAMESPACE}`,
            creatorEmail: 'maker@example.com',
            description: 'by hand',
            records: Object.fromEntries(
              HAND_WRITTEN.map(([key, type, json]) => [String(key), { type, value: json.startsWith('{') ? {} : '' }]),
            ),
          },
        ),
      );
      expect(report.problems).toEqual([]);
      // Hand-written SQL, as another writer would: the `json` column takes these escapes as they are.
      for (const [key, , json] of HAND_WRITTEN) {
        await db.execute(
          sql`update records set value = ${json}::json where key = ${key}
              and profile_id = (select id from profiles where name = ${`written@${NAMESPACE}`})`,
        );
      }
      // What docs/data.md asks of a writer that changes records by hand: the stored records text goes.
      await db.execute(sql`update profiles set records_json = null where name = ${`written@${NAMESPACE}`}`);
    },
    { PUBLIC_URL, PROFILE_LIMIT: '0' },
  );

  it('renders values other writers stored that are not text (U+0000, lone surrogates)', async () => {
    const answers = await everyAnswer(suite.server.url, `written@${NAMESPACE}`, PUBLIC_URL);
    // JSON carries them as the escapes they are; the vCard, which is UTF-8, as U+FFFD, NUL left out.
    expect(answers.rest.records['60']?.value).toBe('\ud800');
    expect(answers.graphql.records.find((record) => record.key === '60')?.raw).toBe('\ud800');
    expect(valuesOf(answers.vcard, 'fn')).toEqual(['\ufffd Name']);
    expect(valuesOf(answers.vcard, 'email')).toEqual(['\ufffd@x.example']);
    expect(answers.vcard.filter(([name]) => name === 'x-socialprofile' || name === 'impp')).toHaveLength(5);
    expect(answers.graphql.wallets.map((wallet) => wallet.symbol)).toEqual(['eth', 'btc\u0000']);
  });

  // Fails on PGlite: it drops the leading U+FEFF when it reads the row (see notStartingWithFeff).
  (kind === 'pglite' ? it.fails : it)('keeps a description and image that start with U+FEFF', async () => {
    const name = `feff-${kind}@${NAMESPACE}`;
    const fields = { description: '\ufeffbio', image: '\ufeff', level: 0, records: {} };
    const report = await importLines(
      suite.handle.db,
      ndjson({ kind: 'profile', name, creatorEmail: 'm@example.com', ...fields }),
    );
    expect(report.problems).toEqual([]);
    expectAsStored(await everyAnswer(suite.server.url, name, PUBLIC_URL), name, fields);
  });

  it('renders every profile the importer accepts, in every format, values as stored', async () => {
    let index = 0;
    let rendered = 0;
    await fc.assert(
      fc.asyncProperty(generatedProfile, async (fields) => {
        index += 1;
        const name = `p${index}-${kind}@${NAMESPACE}`;
        const line = { kind: 'profile', name, creatorEmail: 'maker@example.com', ...fields };
        const report = await importLines(suite.handle.db, ndjson(line));
        if (!report.ok) {
          // Only what the importer refuses on purpose: too much text, a value of the wrong shape.
          expect(report.problems[0]?.reason, JSON.stringify(line)).toMatch(/too long|in all|record type ".*" needs/);
          return;
        }
        const answers = await everyAnswer(suite.server.url, canonicalName(name), PUBLIC_URL);
        expectAsStored(answers, name, fields);
        rendered += 1;
      }),
      { numRuns: 200 },
    );
    // Nearly every generated profile is accepted: the property is about them.
    expect(rendered).toBeGreaterThan(index * 0.9);
  }, 240_000);
});

function valuesOf(properties: JCardProperty[], name: string): unknown[] {
  return properties.filter((property) => property[0] === name).map((property) => property[3]);
}

/** A text as a vCard reads back: control characters but tab and line breaks left out, then each line break a `\n`. */
function asVCardText(value: string): string {
  return value.replace(/[^\P{Cc}\t\n\r]/gu, '').replace(/\r\n|\r/g, '\n');
}

function expectAsStored(
  answers: Answers,
  name: string,
  fields: { description: string; image: string; level: number; records: Record<string, StoredRecord> },
): void {
  const canonical = canonicalName(name);
  expect(answers.rest).toEqual({
    name: canonical,
    description: fields.description,
    image: fields.image,
    attributes: [
      { trait_type: 'domain', value: canonical },
      { trait_type: 'level', value: fields.level },
      { trait_type: 'length', value: [...canonical].length },
    ],
    records: fields.records,
  });
  expect(answers.graphql.description).toBe(fields.description);
  expect(
    Object.fromEntries(answers.graphql.records.map((record) => [record.key, { type: record.type, value: record.raw }])),
  ).toEqual(fields.records);
  const records = Object.entries(fields.records)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([, record]) => record);
  const strings = (type: string) =>
    records.flatMap((record) =>
      record.type === type && typeof record.value === 'string' && record.value.trim() !== ''
        ? [record.value.trim()]
        : [],
    );

  const vcard = answers.vcard;
  expect(valuesOf(vcard, 'nickname')).toEqual([canonical]);
  expect(valuesOf(vcard, 'fn')).toEqual([asVCardText(strings('name')[0] ?? canonical)]);
  expect(valuesOf(vcard, 'note')).toEqual(fields.description.trim() === '' ? [] : [asVCardText(fields.description)]);
  expect(valuesOf(vcard, 'email')).toEqual(strings('email').map(asVCardText));
  expect(valuesOf(vcard, 'tel')).toHaveLength(strings('phone').flatMap(phoneNumbers).length);
  expect(valuesOf(vcard, 'source')).toEqual([`${PUBLIC_URL}/api/${namePath(canonical)}/vcard`]);
  const handles = records.flatMap((record) =>
    record.type === 'social' && typeof record.value === 'object'
      ? Object.values(record.value).filter((handle) => handle.trim() !== '')
      : [],
  );
  const socials = vcard.filter(([property]) => property === 'x-socialprofile' || property === 'impp');
  expect(socials).toHaveLength(handles.length);
  // A handle without a profile URL reads back as the text it is.
  for (const [, , type, value] of socials) {
    if (type === 'text') expect(handles.map((handle) => asVCardText(handle.trim()))).toContain(value);
  }
}
