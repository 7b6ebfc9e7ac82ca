/**
 * Page cursors of the name listings (prefix search, reverse lookup by wallet).
 *
 * Pages are keyset pages over names in code-point order: a cursor is the last name a page
 * returned, and the next page is the names after it. So a cursor stays correct while data
 * changes: no name is returned twice or skipped among those present on both reads.
 *
 * A cursor is opaque to clients (base64url) and bound to its query: it carries a hash of the
 * query it was made for, and the name it holds must be one that query can return. Anything else
 * (a malformed string, another query's cursor, an older format) is refused as bad input, never
 * passed to the database. A cursor a client makes up that passes these checks names a position
 * the client could have reached anyway, so cursors need no secret.
 */

import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';

/** Bumped when the format changes: cursors of the old format are then refused, not misread. */
const FORMAT = 'n1';
/** A name ID is at most 127 code points (≤ 508 bytes of UTF-8): base64 of that and the header. */
const MAX_CURSOR_LENGTH = 1024;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export const INVALID_CURSOR_MESSAGE = 'Invalid cursor, expected one from a page of the same query';

/** Identifies a query (kind and canonical parameters) without spelling it out in every cursor. */
function scopeHash(scope: string): string {
  return createHash('sha256').update(scope).digest('base64url').slice(0, 16);
}

/** The cursor that continues `scope`'s listing after `name`. */
export function encodeCursor(scope: string, name: string): string {
  return cursorsFor(scope, [name])[0] ?? '';
}

/** The cursors after each of `names` in `scope`'s listing (the scope is hashed once). */
export function cursorsFor(scope: string, names: readonly string[]): string[] {
  const hash = scopeHash(scope);
  return names.map((name) => Buffer.from(`${FORMAT}\n${hash}\n${name}`).toString('base64url'));
}

/** The name a cursor of `scope` continues after, or null when it is not such a cursor. */
export function decodeCursor(scope: string, cursor: string): string | null {
  if (cursor.length > MAX_CURSOR_LENGTH || !BASE64URL.test(cursor)) return null;
  const bytes = Buffer.from(cursor, 'base64url');
  // Only the encoding encodeCursor writes: no padding, no stray bits, valid UTF-8.
  if (bytes.toString('base64url') !== cursor || !isUtf8(bytes)) return null;
  const parts = bytes.toString('utf8').split('\n');
  if (parts.length !== 3 || parts[0] !== FORMAT || parts[1] !== scopeHash(scope)) return null;
  return parts[2] ?? null;
}
