/**
 * The API-key guard: what a key looks like, how one is made and hashed, and which key (if any) a
 * request presents. Nothing here reads the database; src/service/api-keys.ts tells a valid key
 * from an unknown or revoked one.
 *
 * A key is `nps_` and 40 random base62 characters (about 238 bits). A request presents it in
 * `Authorization: Bearer <key>` or `X-API-Key: <key>`. The rules, all decided before any lookup:
 * - no header: no key; the per-IP limits apply;
 * - both headers with the same key: that key; with different values: invalid (401), since the
 *   request does not say which app it is, and guessing would charge the wrong one;
 * - `Authorization` with another scheme than Bearer: invalid (the service has no other);
 * - a value that is not a well-formed key (empty, repeated headers joined by Node, wrong prefix,
 *   other characters, longer than MAX_KEY_LENGTH): invalid, without hashing it;
 * - a key in the query string (`api_key`, `apiKey`, in any case): refused with 400, because URLs
 *   end up in logs, proxies and caches.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

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

/** The key a request presents in its headers (rules above). */
export function credentialOf(headers: IncomingHttpHeaders): Credential {
  const authorization = headers.authorization;
  const header = headers['x-api-key'];
  if (authorization === undefined && header === undefined) return NONE;
  let bearer: string | undefined;
  if (authorization !== undefined) {
    bearer = BEARER.exec(authorization)?.[1];
    if (bearer === undefined) return INVALID;
  }
  // Node joins repeated X-API-Key headers with ", ", which is never a well-formed key.
  const apiKeyHeader = Array.isArray(header) ? header.join(', ') : header;
  if (bearer !== undefined && apiKeyHeader !== undefined && bearer !== apiKeyHeader) return INVALID;
  const key = bearer ?? apiKeyHeader ?? '';
  return isWellFormedApiKey(key) ? { kind: 'key', hash: hashApiKey(key) } : INVALID;
}

const QUERY_NAMES = new Set(['api_key', 'apikey']);

/** Whether a request URL carries an API key parameter (`api_key` or `apiKey`, in any case). */
export function apiKeyInQuery(url: string): boolean {
  const start = url.indexOf('?');
  if (start < 0) return false;
  const query = url.slice(start + 1);
  // Most query strings (GraphQL GETs) name neither: skip parsing them.
  if (!/api(?:_|%5f)?key/i.test(query)) return false;
  for (const name of new URLSearchParams(query).keys()) {
    if (QUERY_NAMES.has(name.toLowerCase())) return true;
  }
  return false;
}
