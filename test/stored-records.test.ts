/**
 * Records whose values stay stored text (src/profiles/stored-records.ts): the records text the
 * database builds is split without parsing. Whatever the values hold, the records, their shapes and what
 * answers write of them must be exactly what parsing the whole text gives.
 */
import { describe, expect, it } from 'vitest';
import { parseJsonKeepingOrder } from '../src/profiles/record-value.js';
import { StoredRecord, splitStoredRecords } from '../src/profiles/stored-records.js';

/** The records text as src/db/queries.ts has the database build it (values as the importer stores them). */
function recordsText(records: ReadonlyArray<{ key: number; type: string; value: unknown }>): string {
  const parts = records.map(
    ({ key, type, value }) => `"${key}":{"type":${JSON.stringify(type)},"value":${JSON.stringify(value)}}`,
  );
  return `{${parts.join(',')}}`;
}

/** What the records were before values stayed text: the whole text parsed. */
function parsedRecords(text: string) {
  const stored = parseJsonKeepingOrder(text) as Record<string, { type: string; value: unknown }>;
  return Object.entries(stored).map(([key, { type, value }]) => ({ key, type, value }));
}

function expectSameAsParsed(text: string): void {
  const split = splitStoredRecords(text);
  if (split === undefined) throw new Error(`not split: ${text}`);
  const read = split.map(({ key, type, raw }) => ({ key, type, value: raw }));
  expect(read).toEqual(parsedRecords(text));
  // What an answer writes of each value is its stored text.
  for (const record of split) expect(JSON.stringify(record.raw)).toBe(record.text);
  expect(JSON.parse(JSON.stringify(split))).toEqual(read.map(({ key, type, value }) => ({ key, type, raw: value })));
}

/** Strings that make splitting hard: quotes, runs of backslashes, controls, non-ASCII, lone surrogates. */
const HARD_STRINGS = [
  '',
  'plain',
  'say "hi"',
  'ends with a backslash \\',
  '\\',
  '\\\\',
  '\\"',
  '"',
  '","value":"',
  '"}},"2":{"type":"x","value":"',
  '{"a":1}',
  'tab\there, line\nbreak, nul\u0000, bell\u0007',
  'émoji 😀 and ﬀ',
  'lone \ud800 surrogate',
  '\u2028\u2029',
  `\u0000${'0'.repeat(32)}`,
];

describe('splitting the records text', () => {
  it('gives no records for an empty records object', () => {
    expect(splitStoredRecords('{}')).toEqual([]);
  });

  it('reads string values, map values and other JSON values as parsing does', () => {
    expectSameAsParsed(
      recordsText([
        { key: 0, type: 'name', value: 'Alice' },
        { key: 2, type: 'social', value: { twitter: 'alice', github: 'al' } },
        { key: 3, type: 'notes', value: {} },
        { key: 10, type: 'weird "type" \\ here', value: 'x' },
        { key: 11, type: 'link', value: { n: 1, list: [1, [2, { a: '}' }]], nothing: null, yes: true } },
        { key: 12, type: 'pgp', value: '' },
      ]),
    );
  });

  it('reads every hard string as a value, a map key, a map value and a type', () => {
    for (const text of HARD_STRINGS) {
      expectSameAsParsed(
        recordsText([
          { key: 1, type: text || 't', value: text },
          { key: 2, type: 'social', value: { [text]: text, after: text } },
        ]),
      );
    }
  });

  it('reads a type alike wherever escapes are in the text: before it, in it, after it', () => {
    expectSameAsParsed(
      recordsText([
        { key: 1, type: 'plain', value: 'no escape yet' },
        { key: 2, type: 'a', value: 'a quote " and a backslash \\' },
        { key: 3, type: 'after escapes', value: { 'key \\ "': 'v' } },
        { key: 4, type: 'quote " in the type', value: 'x' },
        { key: 5, type: 'back\\slash', value: 'y' },
        { key: 6, type: 'last', value: 'z' },
      ]),
    );
  });

  it('keeps the stored order of map keys that look like numbers', () => {
    const [record] = splitStoredRecords('{"1":{"type":"link","value":{"Blog":"b","2024":"y","7":"s"}}}') ?? [];
    expect(Object.keys(record?.raw as object)).toEqual(['Blog', '2024', '7']);
    expect(JSON.stringify([record?.raw])).toBe('[{"Blog":"b","2024":"y","7":"s"}]');
  });

  it('knows each value shape without parsing it', () => {
    const shapes = splitStoredRecords(
      recordsText([
        { key: 1, type: 'a', value: 's' },
        { key: 2, type: 'a', value: { x: 'y' } },
        { key: 3, type: 'a', value: {} },
        { key: 4, type: 'a', value: { x: 1 } },
        { key: 5, type: 'a', value: { x: { y: 'z' } } },
        { key: 6, type: 'a', value: ['s'] },
        { key: 7, type: 'a', value: 7 },
      ]),
    )?.map(({ shape }) => shape);
    expect(shapes).toEqual(['string', 'stringMap', 'stringMap', 'other', 'other', 'other', 'other']);
  });

  it('matches parsing on many generated records', () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    const pick = <T>(items: readonly T[]): T => items[next() % items.length] as T;
    const text = () => Array.from({ length: next() % 4 }, () => pick(HARD_STRINGS)).join(pick(['', '"', '\\', 'x']));
    for (let round = 0; round < 300; round += 1) {
      const records = Array.from({ length: next() % 6 }, (_, index) => ({
        key: index * 3 + (next() % 3),
        type: pick(['name', 'social', 'crypto', 'link', text()]) || 'x',
        value:
          next() % 2 === 0
            ? text()
            : Object.fromEntries([
                [text(), text()],
                [`k${index}`, text()],
              ]),
      }));
      expectSameAsParsed(recordsText(records));
    }
  });

  it('leaves text of another layout to be parsed', () => {
    for (const text of [
      '',
      '{',
      '[]',
      '{ "1":{"type":"a","value":"x"}}',
      '{"1": {"type":"a","value":"x"}}',
      '{"1":{"type":"a","value": "x"}}',
      '{"1":{"type":"a","value":{"a": "x"}}}',
      '{"1":{"type":"a","value":[1, 2]}}',
      '{"1":{"type":"a","value":"x"},}',
      '{"1":{"type":"a","value":"x"}}trailing',
      '{"1":{"type":"a","value":"x}}',
      '{"a":{"type":"a","value":"x"}}',
      '{"1":{"value":"x","type":"a"}}',
      '{"1":{"type":"a","value":"x","more":1}}',
    ]) {
      expect(splitStoredRecords(text), text).toBeUndefined();
    }
  });
});

describe('stored records', () => {
  it('read a value: a string without escapes as its text, any other parsed', () => {
    for (const value of ['', 'plain', 'é😀', 'a"b', 'a\\b', '\n', { a: 'b' }, { '2': 'x', a: 'y' }, [1, 'x']]) {
      const text = JSON.stringify(value);
      const stored = splitStoredRecords(`{"1":{"type":"t","value":${text}}}`)?.[0];
      expect(stored?.text).toBe(text);
      expect(stored?.raw).toEqual(value);
      expect(JSON.stringify(stored?.raw)).toBe(text);
    }
  });

  it('of a value read already keep it, with what JSON.stringify writes for it', () => {
    const value = { twitter: 'a', '10': 'b' };
    expect(StoredRecord.of('1', 'social', value).text).toBe(JSON.stringify(value));
    expect(StoredRecord.of('1', 'social', value).raw).toBe(value);
    expect(StoredRecord.of('1', 'name', 'x').shape).toBe('string');
  });
});
