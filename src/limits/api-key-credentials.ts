/**
 * API keys as credentials: what a key looks like, how one is made and hashed, and which key (if
 * any) a request presents. Nothing here reads the database or answers a request:
 * src/service/api-keys.ts tells a valid key from an unknown or revoked one, and the API-key guard
 * (src/http/api-key-guard.ts) refuses a request on what these rules say.
 *
 * A key is `nps_` and 40 random base62 characters (about 238 bits). A request presents it in
 * `Authorization: Bearer <key>` or `X-API-Key: <key>`. The rules, all decided before any lookup:
 * - no header: no key; the per-IP limits apply;
 * - one key per request: two `Authorization` lines, two `X-API-Key` lines, or both headers with
 *   different values are invalid (401), since the request does not say which app it is, and
 *   guessing would charge the wrong one; both headers with the same key are that key: the request
 *   names one app (clients that send both, for gateways reading one or the other, keep working);
 * - `Authorization` with another scheme than Bearer: invalid (the service has no other);
 * - a value that is not a well-formed key (empty, wrong prefix, other characters, longer than
 *   MAX_KEY_LENGTH): invalid, without hashing it;
 * - a key in the query string (`api_key`, `apiKey`, in any case, percent-encoded or not): refused
 *   with 400, because URLs end up in logs, proxies and caches.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const API_KEY_PREFIX = 'nps_';
/** Random characters of a new key: 40 base62 characters are about 238 bits. */
const API_KEY_RANDOM_LENGTH = 40;
/** Keys are accepted with 32 to 128 random characters (the contract: at least 32). */
const KEY_PATTERN = /^nps_[0-9A-Za-z]{32,128}$/;
export const MAX_KEY_LENGTH = API_KEY_PREFIX.length + 128;
const BEARER = /^Bearer +([^ ]+) *$/i;

export const INVALID_API_KEY_MESSAGE = 'Invalid API key';
export const API_KEY_IN_URL_MESSAGE = 'Send the API key in a header, not in the URL';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters, each uniform over base62 (bytes past the last multiple of 62 are skipped). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export const generateApiKey = (): string => `${API_KEY_PREFIX}${randomBase62(API_KEY_RANDOM_LENGTH)}`;

/** A key's public id: what logs, metrics and `keys list` show. */
export const generateApiKeyId = (): string => `key_${randomBase62(12)}`;

/**
 * Lower-case hex SHA-256: what the database stores and the servers look keys up by. Node's
 * one-shot `crypto.hash`: a third of createHash's cost, which every keyed request pays.
 */
export const hashApiKey = (key: string): string => hash('sha256', key, 'hex');

export const isWellFormedApiKey = (value: string): boolean => value.length <= MAX_KEY_LENGTH && KEY_PATTERN.test(value);

/**
 * Whether two hashes are equal, in a time that does not depend on where they differ. Lookups go
 * by hash, so timing could at most tell an attacker the hash of a key they already hold; the
 * store confirms the row a database lookup returns this way (a hit in its memory is the map's
 * own equality on the same hash, which a second compare would not add to).
 */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** What a request presents: no key, a well-formed key (by its hash), or something invalid. */
export type Credential = { kind: 'none' } | { kind: 'key'; hash: string } | { kind: 'invalid' };

const NONE: Credential = { kind: 'none' };
const INVALID: Credential = { kind: 'invalid' };

/** What a request's key is read from: Node's parsed headers and `headersDistinct` (one entry per line). */
export type KeyHeaders = Pick<IncomingMessage, 'headers' | 'headersDistinct'>;

/** A key given by itself (graphql-ws's `apiKey`): well-formed, or invalid. */
export const credentialOfKey = (key: string): Credential =>
  isWellFormedApiKey(key) ? { kind: 'key', hash: hashApiKey(key) } : INVALID;

/**
 * The key a request presents in its headers (rules above). The header lines are counted as the
 * client sent them: Node keeps only the first of two `Authorization` lines in `headers` (the
 * second key would go unseen, and the first app be charged) and joins `X-API-Key` lines.
 */
export function credentialOf({ headers, headersDistinct }: KeyHeaders): Credential {
  // Most requests carry neither: `headersDistinct` is built on first read, so it is not read for them.
  if (headers.authorization === undefined && headers['x-api-key'] === undefined) return NONE;
  const authorization = headersDistinct.authorization ?? [];
  const apiKey = headersDistinct['x-api-key'] ?? [];
  if (authorization.length > 1 || apiKey.length > 1) return INVALID;
  let bearer: string | undefined;
  if (authorization[0] !== undefined) {
    bearer = BEARER.exec(authorization[0])?.[1];
    if (bearer === undefined) return INVALID;
  }
  const header = apiKey[0];
  if (bearer !== undefined && header !== undefined && bearer !== header) return INVALID;
  return credentialOfKey(bearer ?? header ?? '');
}

/**
 * One character of a parameter name as a URL may spell it: itself, or percent-encoded (`%61` for
 * `a`); letters in either case, as the comparison ignores ASCII case (`%41`, `A`, `%61`, `a`).
 */
function spelled(char: string): string {
  const codes = new Set([char.toLowerCase(), char.toUpperCase()].map((c) => c.charCodeAt(0).toString(16)));
  return `(?:${char === '_' ? '_' : char}|${[...codes].map((code) => `%${code}`).join('|')})`;
}

/**
 * A parameter named `api_key` or `apikey` in any ASCII case and any mix of plain and
 * percent-encoded characters: a name as URLSearchParams reads it (between `&`s, up to the first
 * `=`, percent-decoded once, `+` a space; a leading `?` of the query skipped). Nothing else
 * decodes to these ASCII letters (`+` is a space, overlong UTF-8 a replacement character), so the
 * pattern finds exactly those names without decoding the query string, which most requests
 * (GraphQL GETs) would pay for. test/api-key-guard.test.ts checks it against URLSearchParams.
 */
const KEY_PARAMETER = new RegExp(
  `(?:^\\??|&)${[...'api'].map(spelled).join('')}${spelled('_')}?${[...'key'].map(spelled).join('')}(?:[=&]|$)`,
  'i',
);

/**
 * Whether a request URL carries an API key parameter (`api_key` or `apiKey`, in any case and
 * any spelling once percent-decoded). Everything after the first `?` is the query, the fragment
 * included should a client send one.
 */
export function apiKeyInQuery(url: string): boolean {
  const start = url.indexOf('?');
  return start >= 0 && KEY_PARAMETER.test(url.slice(start + 1));
}
