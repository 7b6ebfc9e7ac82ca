import { describe, expect, it } from 'vitest';
import { emailKey, isValidEmail, MAX_EMAIL_LENGTH } from '../src/names/email.js';

const label = (length: number) => 'a'.repeat(length);

describe('e-mail addresses (WHATWG "valid e-mail address", at most 254 characters)', () => {
  it('accepts what the WHATWG rule accepts', () => {
    const valid = [
      'a@b',
      'owner@example.com',
      'First.Last+tag@sub.example.org',
      "o'brien@example.org",
      'x@localhost',
      'a@b-c.d',
      "!#$%&'*+/=?^_`{|}~-@example.com",
      // WHATWG places no rule on dots in the local part.
      '.a@example.com',
      'a..b@example.com',
      `a@${label(63)}.com`,
    ];
    for (const email of valid) expect(isValidEmail(email), email).toBe(true);
  });

  it('rejects what the WHATWG rule rejects', () => {
    const invalid = [
      '',
      'plainaddress',
      'a@',
      '@b',
      'a@@b',
      'a@b@c',
      'a b@c.d',
      'a@b c',
      ' a@b.c',
      'a@b.c ',
      '"a b"@example.com',
      'a@[127.0.0.1]',
      'a@-b.com',
      'a@b-.com',
      'a@b..com',
      'a@.b',
      'a@b.',
      'é@example.com',
      'a@bücher.de',
      'a\n@b.c',
      `a@${label(64)}.com`,
    ];
    for (const email of invalid) expect(isValidEmail(email), JSON.stringify(email)).toBe(false);
  });

  it('allows at most 254 characters', () => {
    const domain = `${label(63)}.${label(63)}.${label(63)}.com`;
    const atLimit = `${'x'.repeat(MAX_EMAIL_LENGTH - domain.length - 1)}@${domain}`;
    expect(atLimit).toHaveLength(254);
    expect(isValidEmail(atLimit)).toBe(true);
    expect(isValidEmail(`x${atLimit}`)).toBe(false);
  });

  it('compares case-insensitively', () => {
    expect(emailKey('Owner@Example.COM')).toBe(emailKey('owner@example.com'));
  });
});
