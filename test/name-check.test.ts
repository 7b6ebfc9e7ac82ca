/**
 * The name check without a database: canonical form, the reason an invalid name gives (always
 * the rule parseNameId breaks on), look-alike warnings, and the script data they rest on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkName, isUnicodeText } from '../src/names/name-check.js';
import { canonicalName, parseNameId } from '../src/names/name-id.js';
import { knownScripts, scriptExtensionsOf, scriptMix, scriptOf } from '../src/names/scripts.js';

/** Characters that make names interesting: every rule's edge, several scripts, compatibility forms. */
const NAME_CHARS = [
  ...'aZ09._-@ ',
  'é',
  'e\u0301',
  'ß',
  'İ',
  'а', // Cyrillic a
  'о', // Cyrillic o
  'α',
  '東',
  'と',
  'カ',
  '한',
  'ａ', // fullwidth a
  '𝐚', // mathematical bold a
  '٣', // Arabic-Indic three
  '/',
  '%',
  '\u0000',
  '\u200b',
  '\ud800',
  '😀',
];
const nameLike = fc.array(fc.constantFrom(...NAME_CHARS), { maxLength: 140 }).map((chars) => chars.join(''));

describe('name check', () => {
  it('gives the canonical form and accepts a valid name without warnings', () => {
    expect(checkName('Demo@ME')).toEqual({
      input: 'Demo@ME',
      canonical: 'demo@me',
      valid: true,
      reason: null,
      warnings: [],
    });
    const nfd = 'Zoë.Müller@Studio'.normalize('NFD');
    expect(checkName(nfd).canonical).toBe('zoë.müller@studio');
  });

  it('has no canonical form for text with an unpaired surrogate', () => {
    const result = checkName('ab\ud800@me');
    expect(result.canonical).toBeNull();
    expect(result.valid).toBe(false);
    expect(result.reason).toBe('The name contains an unpaired surrogate, which is not a Unicode character.');
    expect(isUnicodeText('a😀b')).toBe(true);
    expect(isUnicodeText('a\udc00b')).toBe(false);
  });

  it.each([
    ['', 'A name ID needs an "@" between the local part and the namespace, as in <local>@<domain>.'],
    ['demo', 'A name ID needs an "@" between the local part and the namespace, as in <local>@<domain>.'],
    ['a@b@c', 'A name ID has exactly one "@", and this one has 2.'],
    ['@me', 'The local part is empty; it needs 1 to 63 characters.'],
    ['demo@', 'The namespace is empty; it needs 1 to 63 characters.'],
    ['de mo@me', 'The local part contains U+0020, but only letters, digits, ".", "_" and "-" are allowed.'],
    ['demo@m/e', 'The namespace contains "/" (U+002F), but only letters, digits, ".", "_" and "-" are allowed.'],
    ['de\u200bmo@me', 'The local part contains U+200B, but only letters, digits, ".", "_" and "-" are allowed.'],
    ['-demo@me', 'The local part starts with "-" (U+002D); it must start with a letter or digit.'],
    ['demo.@me', 'The local part ends with "." (U+002E); it must end with a letter or digit.'],
    [`${'a'.repeat(64)}@me`, 'The local part has 64 characters, but at most 63 are allowed.'],
    [`demo@${'b'.repeat(70)}`, 'The namespace has 70 characters, but at most 63 are allowed.'],
  ])('says which rule %j breaks', (input, reason) => {
    const result = checkName(input);
    expect(result.valid).toBe(false);
    expect(result.reason).toBe(reason);
    expect(result.canonical).toBe(canonicalName(input));
    expect(result.warnings).toEqual([]);
  });

  it('is valid exactly when the service accepts the name, and then gives no reason', () => {
    fc.assert(
      fc.property(nameLike, (input) => {
        const result = checkName(input);
        const accepted = parseNameId(input) !== null;
        expect(result.valid).toBe(accepted);
        if (accepted) {
          expect(result.reason).toBeNull();
          expect(result.canonical).toBe(parseNameId(input)?.name);
        } else {
          // One sentence, ending with a full stop.
          expect(result.reason).toMatch(/^[A-Z][^\n]*\.$/);
          expect(result.warnings).toEqual([]);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('warns about a part that mixes Latin and Cyrillic letters, naming the scripts', () => {
    // "pаypal" with a Cyrillic а.
    const result = checkName('p\u0430ypal@me');
    expect(result.valid).toBe(true);
    expect(result.warnings).toEqual([
      'The local part mixes letters of the Latin and Cyrillic scripts, so it can look like a different name.',
    ]);
    expect(checkName('paypal@м\u0435').warnings).toEqual([]); // wholly Cyrillic namespace: one script
    expect(checkName('αβγ-abc@me').warnings[0]).toContain('Greek and Latin');
  });

  it('does not warn about one script, digits and punctuation, or Japanese written with Latin', () => {
    for (const name of [
      'алиса@мир',
      'zoë.müller@studio',
      'はなこ@me',
      '東京とうきょうカタカナ2024@me',
      'tokyo東京@me',
      'a1_b-c.d@me',
    ]) {
      expect(checkName(name).warnings, name).toEqual([]);
    }
  });

  it('warns about characters with a plainer look-alike (compatibility forms)', () => {
    expect(checkName('ｐａｙ@me').warnings).toEqual([
      'The local part has characters that look like plainer ones: it can be taken for "pay".',
    ]);
    expect(checkName('demo@𝐦𝐞').warnings).toEqual([
      'The namespace has characters that look like plainer ones: it can be taken for "me".',
    ]);
  });
});

describe('script data', () => {
  it('puts every letter and digit the engine knows into the scripts listed', () => {
    const letterOrDigit = /^[\p{L}\p{Nd}]$/u;
    const withoutScript: string[] = [];
    const withoutExtensions: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint += 1) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
      const char = String.fromCodePoint(codePoint);
      if (!letterOrDigit.test(char)) continue;
      const label = `U+${codePoint.toString(16).toUpperCase()}`;
      if (!/^[\p{sc=Zyyy}\p{sc=Zinh}]$/u.test(char) && scriptOf(char) === null) withoutScript.push(label);
      // An empty set would make any text with this character "mixed".
      if (scriptExtensionsOf(char)?.size === 0) withoutExtensions.push(label);
    }
    expect(withoutScript.slice(0, 20)).toEqual([]);
    expect(withoutExtensions.slice(0, 20)).toEqual([]);
  });

  it('compiles every listed script the engine supports (all of them on Node 24)', () => {
    expect(knownScripts().length).toBeGreaterThanOrEqual(165);
  });

  it('resolves scripts as UTS #39 does', () => {
    expect(scriptMix('abc')).toEqual({ singleScript: true, highlyRestrictive: true, scripts: ['Latin'] });
    expect(scriptMix('123')).toEqual({ singleScript: true, highlyRestrictive: true, scripts: [] });
    expect(scriptMix('abc\u0430')).toMatchObject({ singleScript: false, highlyRestrictive: false });
    // Han with kana is Japanese: one writing system.
    expect(scriptMix('東京とカ')).toMatchObject({ singleScript: true });
    // Latin with Japanese is mixed, but allowed at the Highly Restrictive level.
    expect(scriptMix('tokyo東京')).toMatchObject({ singleScript: false, highlyRestrictive: true });
    expect(scriptMix('abc한')).toMatchObject({ singleScript: false, highlyRestrictive: true });
    expect(scriptMix('한東а')).toMatchObject({ singleScript: false, highlyRestrictive: false });
    expect(scriptMix('とα')).toEqual({ singleScript: false, highlyRestrictive: false, scripts: ['Hiragana', 'Greek'] });
  });
});
