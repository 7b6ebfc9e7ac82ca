import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalName, codePointLength, parseNameId, parseNamespace } from '../src/names/name-id.js';

const part = (length: number, letter = 'a') => letter.repeat(length);

describe('name IDs', () => {
  it('canonicalises every text as NFC, lower case, NFC (ASCII takes a shorter way to the same form)', () => {
    const full = (text: string) => text.normalize('NFC').toLowerCase().normalize('NFC');
    const texts = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 40 }));
    fc.assert(
      fc.property(texts, (text) => canonicalName(text) === full(text)),
      { numRuns: 500 },
    );
    // Letters whose lower case is longer, or not ASCII, next to ASCII ones.
    for (const text of ['İSTANBUL@me', 'STRASSE@ß', 'ΣΊΣΥΦΟΣ@me', 'K@me', 'A\u030a@me']) {
      expect(canonicalName(text), text).toBe(full(text));
    }
  });

  it('counts the length limits in code points whatever the UTF-16 length', () => {
    const astral = '\u{1d400}'; // MATHEMATICAL BOLD CAPITAL A: a letter, two UTF-16 units
    expect(parseNameId(`${astral.repeat(63)}@me`)).not.toBeNull();
    expect(parseNameId(`${astral.repeat(64)}@me`)).toBeNull();
    expect(parseNameId(`${part(63)}@${part(63)}`)).not.toBeNull();
    expect(parseNameId(`${astral.repeat(62)}@${astral.repeat(62)}x`)).not.toBeNull();
  });

  it('canonicalises to NFC lower case and splits into local part and namespace', () => {
    expect(parseNameId('Demo@ME')).toEqual({ name: 'demo@me', local: 'demo', domain: 'me' });
    // "Zoé" typed as Z, o, e + combining acute accent (NFD) is the same name as the composed form.
    expect(parseNameId('Zoe\u0301@Studio')).toEqual({ name: 'zo\u00e9@studio', local: 'zo\u00e9', domain: 'studio' });
    expect(canonicalName('ZOE\u0301')).toBe('zo\u00e9');
    expect(parseNameId('ΟΔΟΣ@ΜΕ')?.name).toBe('οδος@με');
  });

  it('accepts letters and digits of any script, and . _ - inside a part', () => {
    for (const name of [
      'алиса@мир',
      'はなこ@me',
      'zoë.müller@studio',
      'محمد@me',
      '名前@例',
      '42@me',
      '٣@me',
      'a.b_c-d@x.y',
      'a..b@me',
      'a__b@m--e',
    ]) {
      expect(parseNameId(name), name).not.toBeNull();
    }
  });

  it('rejects parts that start or end with a symbol, and empty parts', () => {
    for (const name of ['.a@me', 'a.@me', '_a@me', 'a-@me', 'a@.me', 'a@me.', 'a@-me', '@me', 'a@', '@', '']) {
      expect(parseNameId(name), name).toBeNull();
    }
  });

  it('rejects a missing or second @', () => {
    expect(parseNameId('demo')).toBeNull();
    expect(parseNameId('a@b@c')).toBeNull();
    expect(parseNameId('a@@b')).toBeNull();
  });

  it('rejects whitespace, control characters, URL delimiters and emoji', () => {
    const bad = [
      ' a@me',
      'a@me ',
      'a b@me',
      'a\tb@me',
      'a\nb@me',
      'a\u0000b@me',
      'a\u007fb@me',
      'a\u00a0b@me',
      'a\u200bb@me',
      'a/b@me',
      'a?b@me',
      'a#b@me',
      'a%b@me',
      'a%40b@me',
      '😀@me',
      'a😀b@me',
      'a@m😀e',
      'a+b@me',
      "a'b@me",
      'a\u202eb@me',
    ];
    for (const name of bad) expect(parseNameId(name), JSON.stringify(name)).toBeNull();
  });

  it('allows parts of 63 characters and the whole name up to 127, counted in code points', () => {
    expect(parseNameId(`${part(63)}@${part(63)}`)?.name).toHaveLength(127);
    expect(parseNameId(`${part(64)}@me`)).toBeNull();
    expect(parseNameId(`me@${part(64)}`)).toBeNull();
    // 63 letters outside the Basic Multilingual Plane: 126 UTF-16 units but 63 characters.
    const astral = part(63, '\u{1d4b6}');
    expect(astral.length).toBe(126);
    expect(parseNameId(`${astral}@me`)).not.toBeNull();
    expect(parseNameId(`${astral}\u{1d4b6}@me`)).toBeNull();
    // Limits apply after NFC: 63 decomposed "é" (126 code points as typed) are 63 characters.
    expect(parseNameId(`${'e\u0301'.repeat(63)}@me`)?.local).toBe('\u00e9'.repeat(63));
  });

  it('parses a namespace on its own', () => {
    expect(parseNamespace('ME')).toBe('me');
    expect(parseNamespace('Mi\u0301r')).toBe('m\u00edr');
    expect(parseNamespace('a@b')).toBeNull();
    expect(parseNamespace('')).toBeNull();
    expect(parseNamespace(part(64))).toBeNull();
  });

  it('measures length in code points', () => {
    expect(codePointLength('demo@me')).toBe(7);
    expect(codePointLength('\u{1d4b6}@me')).toBe(4);
    expect(codePointLength('алиса@мир')).toBe(9);
  });
});
