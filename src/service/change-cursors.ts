/**
 * Cursors of the change log: opaque strings (base64url, at most 64 characters) naming a position
 * of the log (src/db/change-log.ts), or `now`, the current end. Anything else, and anything
 * encodeChangeCursor would not have written, is refused as bad input, never passed to the
 * database. A cursor a client makes up that passes is a position it could have been given, so
 * cursors need no secret.
 */
import type { LogPosition } from '../loaders/change-log.js';

/** What `after=now` asks for: no changes, and `next` at the end of the log. */
export const CURRENT_END = 'now';

/** Bumped when the format changes: cursors of an older format are then refused, not misread. */
const FORMAT = 'cl1';
const DECODED = /^cl1:(0|[1-9][0-9]{0,15}):(0|[1-9][0-9]{0,15})$/;
const MAX_LENGTH = 64;

export function encodeChangeCursor(position: LogPosition): string {
  return Buffer.from(`${FORMAT}:${position.commitSeq}:${position.seq}`).toString('base64url');
}

/** The position a cursor names, CURRENT_END for `now`, undefined for anything else. */
export function decodeChangeCursor(cursor: string): LogPosition | typeof CURRENT_END | undefined {
  if (cursor === CURRENT_END) return CURRENT_END;
  if (cursor.length === 0 || cursor.length > MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const decoded = Buffer.from(cursor, 'base64url').toString('latin1');
  const match = DECODED.exec(decoded);
  if (match === null) return undefined;
  const position = { commitSeq: Number(match[1]), seq: Number(match[2]) };
  if (!Number.isSafeInteger(position.commitSeq) || !Number.isSafeInteger(position.seq)) return undefined;
  // Only what encodeChangeCursor writes: no padding, no stray bits.
  return encodeChangeCursor(position) === cursor ? position : undefined;
}
