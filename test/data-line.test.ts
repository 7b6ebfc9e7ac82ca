import { describe, expect, it } from 'vitest';
import { DATA_LIMITS } from '../src/data/data-limits.js';
import { parseDataLine, toDataObject, validateDataObject } from '../src/data/data-line.js';
import { longestName, recordsAtLimits } from './support/largest-profiles.js';

const profile = (fields: Record<string, unknown>) =>
  JSON.stringify({ kind: 'profile', name: 'a@me', creatorEmail: 'maker@example.com', ...fields });
const reasonOf = (text: string) => {
  const result = parseDataLine(text);
  if (result.ok) throw new Error(`accepted: ${text}`);
  return result.reason;
};

describe('data file lines', () => {
  it('parses a namespace, canonicalising its name and trimming the e-mail', () => {
    expect(parseDataLine('{"kind":"namespace","name":"ME","ownerEmail":"  Owner@Example.com "}')).toEqual({
      ok: true,
      line: { kind: 'namespace', name: 'me', ownerEmail: 'Owner@Example.com' },
    });
  });

  it('parses a profile with defaults for the optional fields', () => {
    expect(parseDataLine('{"kind":"profile","name":"Zoe\\u0301@ME","creatorEmail":"Maker@Example.com"}')).toEqual({
      ok: true,
      line: {
        kind: 'profile',
        name: 'zoé@me',
        localPart: 'zoé',
        namespace: 'me',
        creatorEmail: 'Maker@Example.com',
        description: '',
        image: '',
        level: 0,
        records: [],
      },
    });
    const nulls = parseDataLine(profile({ description: null, image: null, level: null, records: null }));
    expect(nulls.ok && nulls.line).toMatchObject({ description: '', image: '', level: 0, records: [] });
  });

  it('sorts records by numeric key and keeps the order of map entries', () => {
    const result = parseDataLine(
      profile({
        records: {
          '20': { type: 'img', value: { z: '1', a: '2' } },
          '3': { type: 'website', value: '' },
          '0': { type: 'x', value: {} },
        },
      }),
    );
    if (!result.ok || result.line.kind !== 'profile') throw new Error('rejected');
    expect(result.line.records.map((record) => record.key)).toEqual([0, 3, 20]);
    expect(Object.keys(result.line.records[2]!.value)).toEqual(['z', 'a']);
  });

  it('writes lines back in the same format, every field present', () => {
    const result = validateDataObject({
      kind: 'profile',
      name: 'A@Me',
      creatorEmail: 'm@example.com',
      records: { '9': { type: 'notes', value: {} }, '1': { type: 'name', value: 'A' } },
    });
    if (!result.ok) throw new Error(result.reason);
    if (result.line.kind === 'remove') throw new Error('not a profile');
    expect(JSON.stringify(toDataObject(result.line))).toBe(
      '{"kind":"profile","name":"a@me","creatorEmail":"m@example.com","description":"","image":"","level":0,' +
        '"records":{"1":{"type":"name","value":"A"},"9":{"type":"notes","value":{}}}}',
    );
  });

  const rejected: Array<[string, string, string]> = [
    ['bad JSON', '{"kind":"profile",', 'invalid JSON'],
    ['not an object', '[1,2]', 'must be a JSON object, got an array'],
    ['a bare string', '"hello"', 'must be a JSON object, got string "hello"'],
    ['missing kind', '{"name":"a@me"}', 'missing "kind"'],
    ['unknown kind', '{"kind":"person","name":"a@me"}', 'unknown kind "person"'],
    ['unknown field', profile({ desciption: 'typo' }), 'unknown field "desciption" for a profile'],
    ['missing name', '{"kind":"profile","creatorEmail":"m@example.com"}', 'missing "name"'],
    ['name not a string', profile({ name: 7 }), '"name" must be a string, got number 7'],
    ['name without @', profile({ name: 'demo' }), 'invalid name "demo": no "@"'],
    ['name with two @', profile({ name: 'a@b@c' }), 'invalid name "a@b@c": more than one "@"'],
    ['bad local part', profile({ name: 'a b@me' }), 'invalid name "a b@me": the local part must be'],
    ['bad namespace part', profile({ name: 'a@m%e' }), 'invalid name "a@m%e": the namespace must be'],
    ['name too long', profile({ name: `${'a'.repeat(63)}@${'b'.repeat(64)}` }), '128 characters, at most 127'],
    [
      'invalid namespace name',
      '{"kind":"namespace","name":"m e","ownerEmail":"o@example.com"}',
      'invalid namespace name "m e"',
    ],
    [
      'invalid owner e-mail',
      '{"kind":"namespace","name":"me","ownerEmail":"owner at example.com"}',
      'invalid ownerEmail: not a valid e-mail address',
    ],
    ['empty creator e-mail', profile({ creatorEmail: '  ' }), '"creatorEmail" is empty'],
    [
      'invalid creator e-mail',
      profile({ creatorEmail: 'maker@@example.com' }),
      'invalid creatorEmail: not a valid e-mail address',
    ],
    [
      'over-long e-mail',
      profile({ creatorEmail: `${'a'.repeat(250)}@b.cd` }),
      'invalid creatorEmail: 255 characters, at most 254',
    ],
    ['description not a string', profile({ description: 5 }), '"description" must be a string, got number 5'],
    ['negative level', profile({ level: -1 }), '"level" must be an integer from 0 to 2147483647, got -1'],
    ['fractional level', profile({ level: 1.5 }), 'got 1.5'],
    ['level as text', profile({ level: '2' }), 'got "2"'],
    ['level too big', profile({ level: 2 ** 31 }), 'got 2147483648'],
    ['records an array', profile({ records: [] }), '"records" must be an object keyed by record number, got an array'],
    [
      'non-numeric key',
      profile({ records: { name: { type: 'name', value: 'A' } } }),
      'record key "name" is not a record number',
    ],
    ['key with leading zero', profile({ records: { '01': { type: 'name', value: 'A' } } }), 'record key "01"'],
    ['negative key', profile({ records: { '-1': { type: 'name', value: 'A' } } }), 'record key "-1"'],
    [
      'key past 2^31-1',
      profile({ records: { '2147483648': { type: 'name', value: 'A' } } }),
      'record key "2147483648"',
    ],
    [
      'record not an object',
      profile({ records: { '1': 'Demo' } }),
      'record "1" must be an object {"type","value"}, got string "Demo"',
    ],
    [
      'record without type',
      profile({ records: { '1': { value: 'A' } } }),
      'record "1" needs a non-empty string "type", got none',
    ],
    [
      'record with empty type',
      profile({ records: { '1': { type: '', value: 'A' } } }),
      'record "1" needs a non-empty string "type"',
    ],
    ['record without value', profile({ records: { '1': { type: 'name' } } }), 'record "1" has no "value"'],
    [
      'record with extra field',
      profile({ records: { '1': { type: 'name', value: 'A', label: 'x' } } }),
      'record "1" has unknown field "label"',
    ],
    [
      'string type given a map',
      profile({ records: { '1': { type: 'name', value: { first: 'A' } } } }),
      'record "1": record type "name" needs a string value, got an object',
    ],
    [
      'map type given a string',
      profile({ records: { '6': { type: 'social', value: 'demo' } } }),
      'record "6": record type "social" needs an object of string to string, got string "demo"',
    ],
    [
      'map with a non-string entry',
      profile({ records: { '8': { type: 'crypto', value: { btc: 1 } } } }),
      'record type "crypto" needs an object of string to string',
    ],
    [
      'unknown type with a number',
      profile({ records: { '60': { type: 'score', value: 5 } } }),
      'record type "score" needs a string or an object of string to string, got number 5',
    ],
  ];

  it.each(rejected)('rejects %s with a precise reason', (_, text, reason) => {
    expect(reasonOf(text)).toContain(reason);
  });

  it('never repeats a private e-mail in a reason', () => {
    expect(reasonOf('{"kind":"namespace","name":"me","ownerEmail":"secret owner@example.com"}')).not.toContain(
      'secret',
    );
    expect(reasonOf(profile({ creatorEmail: 'secret maker@example.com' }))).not.toContain('secret');
  });

  it('shortens huge values in reasons', () => {
    expect(reasonOf(profile({ name: `${'x'.repeat(5000)}` })).length).toBeLessThan(200);
  });

  /**
   * Text PostgreSQL cannot store: U+0000 (its text has no NUL) and lone surrogates (UTF-8 has
   * none; JSON's \\u escapes can still write one). Such a line used to pass validation and fail
   * the whole import after its last line (22P05), without a line number.
   */
  const unstorable: Array<[string, Record<string, unknown>, string]> = [
    ['description', { description: 'a\u0000b' }, '"description" holds U+0000 (NUL) at character 2'],
    ['description', { description: 'ab\ud800' }, '"description" holds a lone surrogate U+D800 at character 3'],
    ['image', { image: '\u0000' }, '"image" holds U+0000 (NUL) at character 1'],
    ['image', { image: 'https://x.example/\udfff' }, '"image" holds a lone surrogate U+DFFF at character 19'],
    ['record type', { records: { '5': { type: 'n\u0000', value: '' } } }, 'record "5" type holds U+0000'],
    ['record type', { records: { '5': { type: '\udc00x', value: '' } } }, 'record "5" type holds a lone surrogate'],
    ['string value', { records: { '1': { type: 'name', value: 'A\u0000' } } }, 'record "1" value holds U+0000'],
    ['string value', { records: { '1': { type: 'name', value: '\ud83d' } } }, 'record "1" value holds a lone'],
    ['map key', { records: { '6': { type: 'social', value: { 'x\u0000': 'a' } } } }, 'record "6" key "x\\u0000"'],
    ['map key', { records: { '6': { type: 'social', value: { '\ud800': 'a' } } } }, 'holds a lone surrogate U+D800'],
    [
      'map value',
      { records: { '6': { type: 'social', value: { twitter: 'a\u0000' } } } },
      'record "6" value under "twitter" holds U+0000 (NUL) at character 2',
    ],
    [
      'map value',
      { records: { '9': { type: 'other', value: { ok: 'fine', note: '\udc00' } } } },
      'record "9" value under "note" holds a lone surrogate U+DC00',
    ],
  ];

  it.each(unstorable)('rejects text the database cannot store in the %s', (_, fields, reason) => {
    expect(reasonOf(profile(fields))).toContain(reason);
  });

  it('rejects such text in names and e-mails by their own rules', () => {
    for (const bad of ['\u0000', '\ud800']) {
      expect(reasonOf(profile({ name: `a${bad}@me` }))).toContain('invalid name');
      expect(reasonOf(profile({ creatorEmail: `a${bad}@example.com` }))).toContain('invalid creatorEmail');
      expect(reasonOf(JSON.stringify({ kind: 'namespace', name: `m${bad}`, ownerEmail: 'o@example.com' }))).toContain(
        'invalid namespace name',
      );
      expect(reasonOf(JSON.stringify({ kind: 'namespace', name: 'me', ownerEmail: `o${bad}@example.com` }))).toContain(
        'invalid ownerEmail',
      );
    }
  });

  it('accepts surrogate pairs, escaped or not, and every other control character', () => {
    const text = '\ud83d\ude00 😀 \u0001\u001f\u007f\u0085 \ufffe\uffff';
    const result = parseDataLine(
      profile({ description: text, records: { '1': { type: 'notes', value: { [text]: text } } } }),
    );
    expect(result.ok).toBe(true);
  });

  describe('limits', () => {
    /** Characters counted as code points: a 4-byte character is one. */
    const text = (count: number) => '😀'.repeat(count);
    const map = (count: number, from = 0) =>
      Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${from + index}`, 'v']));
    const records = (count: number) =>
      Object.fromEntries(Array.from({ length: count }, (_, index) => [String(index), { type: 't', value: '' }]));
    const atLimit: Array<[string, Record<string, unknown>, Record<string, unknown>, string]> = [
      [
        'description',
        { description: text(DATA_LIMITS.description) },
        { description: text(DATA_LIMITS.description + 1) },
        '"description" is too long: 4097 characters, at most 4096',
      ],
      [
        'image',
        { image: `https://i.example/${'a'.repeat(DATA_LIMITS.image - 18)}` },
        { image: `https://i.example/${'a'.repeat(DATA_LIMITS.image - 17)}` },
        '"image" is too long: 2049 characters, at most 2048',
      ],
      [
        'number of records',
        { records: records(DATA_LIMITS.records) },
        { records: records(DATA_LIMITS.records + 1) },
        '"records" has 101 records, at most 100',
      ],
      [
        'record type',
        { records: { '1': { type: text(DATA_LIMITS.recordType), value: '' } } },
        { records: { '1': { type: text(DATA_LIMITS.recordType + 1), value: '' } } },
        'record "1" type is too long: 65 characters, at most 64',
      ],
      [
        'string value',
        { records: { '1': { type: 'name', value: text(DATA_LIMITS.stringValue) } } },
        { records: { '1': { type: 'name', value: text(DATA_LIMITS.stringValue + 1) } } },
        'record "1" value is too long: 4097 characters, at most 4096',
      ],
      [
        'number of map entries',
        { records: { '1': { type: 'link', value: map(200) }, '2': { type: 'notes', value: map(56, 200) } } },
        { records: { '1': { type: 'link', value: map(200) }, '2': { type: 'notes', value: map(57, 200) } } },
        'record "2" brings the map entries of the profile to 257, at most 256 in all',
      ],
      [
        'map key',
        { records: { '6': { type: 'social', value: { [text(DATA_LIMITS.mapKey)]: 'x' } } } },
        { records: { '6': { type: 'social', value: { [text(DATA_LIMITS.mapKey + 1)]: 'x' } } } },
        'record "6" key "😀😀😀',
      ],
      [
        'map value',
        { records: { '6': { type: 'social', value: { twitter: text(DATA_LIMITS.mapValue) } } } },
        { records: { '6': { type: 'social', value: { twitter: text(DATA_LIMITS.mapValue + 1) } } } },
        'record "6" value under "twitter" is too long: 2049 characters, at most 2048',
      ],
      [
        'characters of all records',
        {
          records: Object.fromEntries(
            Array.from({ length: 8 }, (_, index) => [String(index), { type: 'name', value: text(4096 - 4) }]),
          ),
        },
        {
          records: Object.fromEntries(
            Array.from({ length: 8 }, (_, index) => [
              String(index),
              { type: 'name', value: text(4096 - (index ? 4 : 3)) },
            ]),
          ),
        },
        'the records hold 32769 characters in all (types, values, map keys and map values), at most 32768',
      ],
    ];

    it.each(atLimit)('accepts the longest %s and rejects one more', (_, longest, tooLong, reason) => {
      const accepted = parseDataLine(profile(longest));
      expect(accepted.ok, accepted.ok ? '' : accepted.reason).toBe(true);
      expect(reasonOf(profile(tooLong))).toContain(reason);
    });

    it('says how long a map key is when it is too long', () => {
      expect(reasonOf(profile({ records: { '6': { type: 'social', value: { [text(200)]: 'x' } } } }))).toMatch(
        /^record "6" key "😀+\.\.\. is too long: 200 characters, at most 128$/u,
      );
    });

    it('accepts a profile at every limit at once, whatever its characters', () => {
      for (const char of ['a', '😀', '\u0001', '"', '\\', 'é', ',']) {
        const line = profile({
          name: longestName(1),
          description: char.repeat(DATA_LIMITS.description),
          image: `https://i.example/${char.repeat(DATA_LIMITS.image - 18)}`,
          records: recordsAtLimits(char, ['linkedin', 'telegram']),
        });
        const result = parseDataLine(line);
        expect(result.ok, result.ok ? char : `${char}: ${result.reason}`).toBe(true);
      }
    });

    it('rejects a line longer than any valid line can be without reading it', () => {
      const padded = profile({ description: 'x' }).replace('{', `{${' '.repeat(DATA_LIMITS.lineBytes)}`);
      expect(reasonOf(padded)).toBe(
        `the line is ${padded.length} bytes long, at most ${DATA_LIMITS.lineBytes} (no valid profile needs that many)`,
      );
    });

    it('keeps reasons short however many unknown fields a line has', () => {
      const fields = Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`field${index}`, 1]));
      const reason = reasonOf(profile(fields));
      expect(reason).toContain('unknown fields "field0", "field1"');
      expect(reason).toContain('and 9995 more');
      expect(reason.length).toBeLessThan(300);
    });
  });

  it('tells which namespace a failed namespace line declares', () => {
    const result = parseDataLine('{"kind":"namespace","name":"Me","ownerEmail":"nope"}');
    expect(result).toMatchObject({ ok: false, declaresNamespace: 'me' });
  });
});
