/**
 * The API-key guard under attack (src/limits/api-keys.ts): which key a request presents, what is
 * refused before any lookup, keys in URLs, and the hash compare.
 */
import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import {
  apiKeyInQuery,
  credentialOf,
  generateApiKey,
  generateApiKeyId,
  hashApiKey,
  isWellFormedApiKey,
  MAX_KEY_LENGTH,
  sameHash,
} from '../src/limits/api-keys.js';

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) };
});

const KEY = generateApiKey();
const OTHER = generateApiKey();

describe('API keys', () => {
  it('are nps_ and 40 base62 characters, different every time, with ids of their own', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(key).toMatch(/^nps_[0-9A-Za-z]{40}$/);
    // Every base62 character turns up: the alphabet is used whole.
    expect(new Set([...keys].join('').slice(0, 8000).replaceAll('nps_', '')).size).toBe(62);
    expect(generateApiKeyId()).toMatch(/^key_[0-9A-Za-z]{12}$/);
  });

  it('are stored as a SHA-256 hash that does not contain them', () => {
    const hash = hashApiKey(KEY);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(KEY.slice(4, 12));
    expect(hashApiKey(KEY)).toBe(hash);
    expect(hashApiKey(OTHER)).not.toBe(hash);
  });

  it.each([
    ['empty', ''],
    ['the prefix alone', 'nps_'],
    ['too short', `nps_${'a'.repeat(31)}`],
    ['too long', `nps_${'a'.repeat(129)}`],
    ['another prefix', `npx_${'a'.repeat(40)}`],
    ['upper-case prefix', `NPS_${'a'.repeat(40)}`],
    ['a blank inside', `nps_${'a'.repeat(20)} ${'a'.repeat(20)}`],
    ['a trailing newline', `${KEY}\n`],
    ['non-ASCII letters', `nps_${'é'.repeat(40)}`],
    ['SQL', `nps_${'a'.repeat(32)}' or '1'='1`],
    ['two keys joined', `${KEY}, ${OTHER}`],
  ])('refuses a malformed key (%s)', (_, value) => {
    expect(isWellFormedApiKey(value)).toBe(false);
    expect(credentialOf({ 'x-api-key': value })).toEqual({ kind: 'invalid' });
    expect(credentialOf({ authorization: `Bearer ${value}` })).toEqual({ kind: 'invalid' });
  });

  it('accepts 32 to 128 random characters', () => {
    expect(isWellFormedApiKey(`nps_${'a'.repeat(32)}`)).toBe(true);
    expect(isWellFormedApiKey(`nps_${'Z9'.repeat(64)}`)).toBe(true);
    expect(`nps_${'Z9'.repeat(64)}`.length).toBe(MAX_KEY_LENGTH);
  });

  it('refuses a very long header (Node allows 16 KiB of headers)', () => {
    const long = `nps_${'a'.repeat(15_000)}`;
    expect(credentialOf({ 'x-api-key': long })).toEqual({ kind: 'invalid' });
    expect(credentialOf({ authorization: `Bearer ${long}` })).toEqual({ kind: 'invalid' });
  });
});

describe('the key a request presents', () => {
  const hash = hashApiKey(KEY);

  it('is none without either header', () => {
    expect(credentialOf({})).toEqual({ kind: 'none' });
    expect(credentialOf({ cookie: `key=${KEY}` })).toEqual({ kind: 'none' });
  });

  it('is read from Authorization: Bearer (any case, blanks around) and from X-API-Key', () => {
    expect(credentialOf({ authorization: `Bearer ${KEY}` })).toEqual({ kind: 'key', hash });
    expect(credentialOf({ authorization: `bearer   ${KEY}  ` })).toEqual({ kind: 'key', hash });
    expect(credentialOf({ 'x-api-key': KEY })).toEqual({ kind: 'key', hash });
  });

  it('is the key when both headers name the same one, invalid when they differ', () => {
    expect(credentialOf({ authorization: `Bearer ${KEY}`, 'x-api-key': KEY })).toEqual({ kind: 'key', hash });
    expect(credentialOf({ authorization: `Bearer ${KEY}`, 'x-api-key': OTHER })).toEqual({ kind: 'invalid' });
    expect(credentialOf({ authorization: `Bearer ${KEY}`, 'x-api-key': '' })).toEqual({ kind: 'invalid' });
  });

  it('is invalid with another Authorization scheme or a bare key there, never keyless', () => {
    for (const authorization of [`Basic ${Buffer.from('a:b').toString('base64')}`, KEY, 'Bearer', 'Bearer ', '']) {
      expect(credentialOf({ authorization })).toEqual({ kind: 'invalid' });
      expect(credentialOf({ authorization, 'x-api-key': KEY })).toEqual({ kind: 'invalid' });
    }
  });

  it('is invalid when X-API-Key is repeated, even with the same key', () => {
    expect(credentialOf({ 'x-api-key': [KEY, KEY] as unknown as string })).toEqual({ kind: 'invalid' });
  });
});

describe('keys in the URL', () => {
  it.each([
    '/api/demo@me?api_key=x',
    '/api/demo@me?apiKey=x',
    '/api/demo@me?APIKEY=x',
    '/api/demo@me?a=1&Api_Key=',
    '/api/demo@me?api%5Fkey=x',
    '/api/demo@me?api%5fkey=x',
    '/graphql?query=%7Bprofile%7D&apiKey=nps_x',
  ])('are found in %s', (url) => {
    expect(apiKeyInQuery(url)).toBe(true);
  });

  it.each([
    '/api/demo@me',
    '/api/apikey@me',
    '/api/demo@me?name=api_key',
    '/api/demo@me?api_keys=x',
    '/graphql?query=%7B%20profile(name%3A%22apikey%40me%22)%7D',
  ])('are not seen where there are none: %s', (url) => {
    expect(apiKeyInQuery(url)).toBe(false);
  });
});

describe('the hash compare', () => {
  it('tells equal hashes from different ones, of any length', () => {
    const hash = hashApiKey(KEY);
    expect(sameHash(hash, hashApiKey(KEY))).toBe(true);
    expect(sameHash(hash, hashApiKey(OTHER))).toBe(false);
    expect(sameHash(hash, hash.slice(0, 63))).toBe(false);
    expect(sameHash(hash, `${hash}0`)).toBe(false);
    expect(sameHash('', '')).toBe(true);
  });

  it('compares equal-length hashes with crypto.timingSafeEqual, never with ===', () => {
    const timingSafeEqual = vi.mocked(crypto.timingSafeEqual);
    timingSafeEqual.mockClear();
    const hash = hashApiKey(KEY);
    expect(sameHash(hash, hashApiKey(OTHER))).toBe(false);
    expect(sameHash(hash, hashApiKey(KEY))).toBe(true);
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
  });
});
