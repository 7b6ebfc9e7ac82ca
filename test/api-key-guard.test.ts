/**
 * The API-key guard under attack (src/limits/api-key-credentials.ts): which key a request presents (header
 * lines as Node's HTTP server parses them, sent over a socket byte for byte), what is refused
 * before any lookup, keys in URLs in every spelling, and the hash compare.
 */
import * as crypto from 'node:crypto';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  apiKeyInQuery,
  type Credential,
  credentialOf,
  credentialOfKey,
  generateApiKey,
  generateApiKeyId,
  hashApiKey,
  isWellFormedApiKey,
  MAX_KEY_LENGTH,
  sameHash,
} from '../src/limits/api-key-credentials.js';

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) };
});

const KEY = generateApiKey();
const OTHER = generateApiKey();

/** A server that answers each request with the credential its headers present. */
let server: Server;
beforeAll(async () => {
  server = createServer((req, res) => res.end(JSON.stringify(credentialOf(req))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The credential of a request with these header lines (`Name: value`), sent as written. */
function presented(...lines: string[]): Promise<Credential> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('end', () => {
      const status = answer.slice(0, answer.indexOf('\r\n'));
      if (status !== 'HTTP/1.1 200 OK') reject(new Error(`the request was not parsed: ${status}`));
      else resolve(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Credential);
    });
    socket.end(['GET / HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close', ...lines, '', ''].join('\r\n'), 'latin1');
  });
}

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
    expect(credentialOfKey(value)).toEqual({ kind: 'invalid' });
  });

  it.each([
    ['empty', ''],
    ['too short', `nps_${'a'.repeat(31)}`],
    ['another prefix', `npx_${'a'.repeat(40)}`],
    ['a blank inside', `nps_${'a'.repeat(20)} ${'a'.repeat(20)}`],
    ['SQL', `nps_${'a'.repeat(32)}' or '1'='1`],
    ['two keys joined', `${KEY}, ${OTHER}`],
    ['Latin-1 letters', `nps_${'\u00e9'.repeat(40)}`],
  ])('refuses a malformed key in either header (%s)', async (_, value) => {
    expect(await presented(`X-API-Key: ${value}`)).toEqual({ kind: 'invalid' });
    expect(await presented(`Authorization: Bearer ${value}`)).toEqual({ kind: 'invalid' });
  });

  it('accepts 32 to 128 random characters', () => {
    expect(isWellFormedApiKey(`nps_${'a'.repeat(32)}`)).toBe(true);
    expect(isWellFormedApiKey(`nps_${'Z9'.repeat(64)}`)).toBe(true);
    expect(`nps_${'Z9'.repeat(64)}`.length).toBe(MAX_KEY_LENGTH);
  });

  it('refuses a very long header (Node allows 16 KiB of headers)', async () => {
    const long = `nps_${'a'.repeat(15_000)}`;
    expect(await presented(`X-API-Key: ${long}`)).toEqual({ kind: 'invalid' });
    expect(await presented(`Authorization: Bearer ${long}`)).toEqual({ kind: 'invalid' });
  });
});

describe('the key a request presents', () => {
  const hash = hashApiKey(KEY);

  it('is none without either header', async () => {
    expect(await presented()).toEqual({ kind: 'none' });
    expect(await presented(`Cookie: key=${KEY}`, `X-Api-Keys: ${KEY}`)).toEqual({ kind: 'none' });
  });

  it('is read from Authorization: Bearer (any case, blanks around) and from X-API-Key', async () => {
    expect(await presented(`Authorization: Bearer ${KEY}`)).toEqual({ kind: 'key', hash });
    expect(await presented(`authorization: bearer   ${KEY}  `)).toEqual({ kind: 'key', hash });
    expect(await presented(`X-API-Key: ${KEY}`)).toEqual({ kind: 'key', hash });
    expect(await presented(`x-api-KEY:${KEY}`)).toEqual({ kind: 'key', hash });
  });

  it('is the key when both headers name the same one, invalid when they differ', async () => {
    expect(await presented(`Authorization: Bearer ${KEY}`, `X-API-Key: ${KEY}`)).toEqual({ kind: 'key', hash });
    expect(await presented(`Authorization: Bearer ${KEY}`, `X-API-Key: ${OTHER}`)).toEqual({ kind: 'invalid' });
    expect(await presented(`X-API-Key: ${OTHER}`, `Authorization: Bearer ${KEY}`)).toEqual({ kind: 'invalid' });
    expect(await presented(`Authorization: Bearer ${KEY}`, 'X-API-Key: ')).toEqual({ kind: 'invalid' });
  });

  it('is invalid with another Authorization scheme or a bare key there, never keyless', async () => {
    for (const authorization of [`Basic ${Buffer.from('a:b').toString('base64')}`, KEY, 'Bearer', 'Bearer ', '']) {
      expect(await presented(`Authorization: ${authorization}`)).toEqual({ kind: 'invalid' });
      expect(await presented(`Authorization: ${authorization}`, `X-API-Key: ${KEY}`)).toEqual({ kind: 'invalid' });
    }
  });

  // Node keeps only the first Authorization line in `headers` and joins X-API-Key lines with ", ":
  // the second key of two Authorization lines went unseen, and the first key's app was charged.
  it.each([
    ['two Authorization lines with different keys', [`Authorization: Bearer ${KEY}`, `Authorization: Bearer ${OTHER}`]],
    ['two Authorization lines with the same key', [`Authorization: Bearer ${KEY}`, `authorization: Bearer ${KEY}`]],
    ['a key, then another scheme', [`Authorization: Bearer ${KEY}`, 'Authorization: Basic YTpi']],
    ['a key, then an empty Authorization', [`Authorization: Bearer ${KEY}`, 'Authorization: ']],
    ['two X-API-Key lines with different keys', [`X-API-Key: ${KEY}`, `X-API-Key: ${OTHER}`]],
    ['two X-API-Key lines with the same key', [`X-API-Key: ${KEY}`, `x-api-key: ${KEY}`]],
    [
      'both headers agreeing, one of them twice',
      [`Authorization: Bearer ${KEY}`, `X-API-Key: ${KEY}`, `X-API-Key: ${KEY}`],
    ],
    [
      'both headers agreeing, Authorization twice',
      [`Authorization: Bearer ${KEY}`, `Authorization: Bearer ${KEY}`, `X-API-Key: ${KEY}`],
    ],
  ])('is invalid with more than one key header line: %s', async (_, lines) => {
    expect(await presented(...lines)).toEqual({ kind: 'invalid' });
  });
});

/** The names URLSearchParams reads from a query, as a server framework would see them. */
const keyNamed = (query: string): boolean =>
  [...new URLSearchParams(query).keys()].some((name) => /^api_?key$/i.test(name));

/** A character as a URL may carry it: itself, or its UTF-8 bytes percent-encoded in either case. */
const spelledChar = (char: string): fc.Arbitrary<string> => {
  const bytes = [...Buffer.from(char)].map((byte) => byte.toString(16).padStart(2, '0'));
  return fc.constantFrom(
    char,
    bytes.map((hex) => `%${hex}`).join(''),
    bytes.map((hex) => `%${hex.toUpperCase()}`).join(''),
  );
};

/** `api_key`, `apiKey` and near misses (another separator, a letter more or less, look-alike letters), spelled every way. */
const nameSpelling: fc.Arbitrary<string> = fc
  .constantFrom(
    'api_key',
    'apikey',
    'API_KEY',
    'ApiKey',
    'api_keys',
    'apkey',
    'api-key',
    'api key',
    'api.key',
    'api__key',
    '_api_key',
    'api_\u212aey',
    '\u0130pikey',
    'api_ke',
  )
  .chain((name) =>
    fc.tuple(...[...name].map((char) => (char === ' ' ? fc.constantFrom(' ', '+', '%20') : spelledChar(char)))),
  )
  .map((chars) => chars.join(''));

const otherParameter: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'query=%7B%20profile(name%3A%22apikey%40me%22)%20%7B%20name%20%7D%20%7D',
    'name=api_key',
    'v=1',
    '',
    'x=%61pi_key',
    'a=1%26api_key=2',
  ),
  fc.webQueryParameters(),
);

describe('keys in the URL', () => {
  it.each([
    '/api/demo@me?api_key=x',
    '/api/demo@me?apiKey=x',
    '/api/demo@me?APIKEY=x',
    '/api/demo@me?a=1&Api_Key=',
    '/api/demo@me?api%5Fkey=x',
    '/api/demo@me?api%5fkey=x',
    // The attack run's: a letter percent-encoded.
    '/api/demo@me?%61pi_key=x',
    '/api/demo@me?ap%69Key=x',
    '/api/demo@me?%41%50%49%5F%4B%45%59=x',
    '/api/demo@me?apiKey',
    '/api/demo@me?x=1&apikey&y=2',
    '/api/demo@me??api_key=x',
    '/api/demo@me?api_key=a&api_key=b',
    '/graphql?query=%7Bprofile%7D&apiKey=nps_x',
    '/graphql?query=%7Bprofile%7D&variables=%7B%7D&%61piKey=nps_x',
  ])('are found in %s', (url) => {
    expect(apiKeyInQuery(url)).toBe(true);
  });

  it.each([
    '/api/demo@me',
    '/api/apikey@me',
    '/api/demo@me?name=api_key',
    '/api/demo@me?api_keys=x',
    '/api/demo@me?api+key=x',
    '/api/demo@me?api-key=x',
    '/api/demo@me?%2561pi_key=x',
    '/api/demo@me?a=1%26api_key=x',
    '/graphql?query=%7B%20profile(name%3A%22apikey%40me%22)%7D',
  ])('are not seen where there are none: %s', (url) => {
    expect(apiKeyInQuery(url)).toBe(false);
  });

  it('are found exactly where URLSearchParams reads a parameter named api_key or apiKey, in any spelling', () => {
    fc.assert(
      fc.property(
        fc.array(otherParameter, { maxLength: 4 }),
        nameSpelling,
        fc.constantFrom('=', '', '=nps_x', '=a=b'),
        fc.nat(4),
        fc.boolean(),
        (others, name, value, at, leadingQuestionMark) => {
          const parameters = [...others];
          parameters.splice(Math.min(at, parameters.length), 0, `${name}${value}`);
          const query = `${leadingQuestionMark ? '?' : ''}${parameters.join('&')}`;
          expect(apiKeyInQuery(`/api/demo@me?${query}`), query).toBe(keyNamed(query));
        },
      ),
      { numRuns: 2000 },
    );
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
