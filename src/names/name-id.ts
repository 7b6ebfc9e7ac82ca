/**
 * Name ID rules of the API contract: `<local>@<domain>`, each part 1 to 63 Unicode letters,
 * digits, `.`, `_` or `-`, starting and ending with a letter or digit, at most 127 characters in
 * all. Names are case-insensitive; the canonical form is NFC, lower-cased.
 */

export const INVALID_NAME_MESSAGE = 'Invalid name format, expected <local>@<domain>';

const PART = /^[\p{L}\p{Nd}](?:[\p{L}\p{Nd}._-]{0,61}[\p{L}\p{Nd}])?$/u;
const MAX_NAME_LENGTH = 127;

export interface NameId {
  /** Canonical form: NFC, lower case. */
  name: string;
  local: string;
  /** The top-level name (namespace). */
  domain: string;
}

/** Unicode code points, which is what the contract means by "characters". */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** Text of ASCII characters only: its own NFC form, and lower-cased to ASCII. */
const ASCII = /^\p{ASCII}*$/u;

/** NFC and lower case; normalising again after lower-casing keeps the result in NFC. */
export function canonicalName(input: string): string {
  // Nearly every name is ASCII, for which both normalisations change nothing (and cost most).
  if (ASCII.test(input)) return input.toLowerCase();
  return input.normalize('NFC').toLowerCase().normalize('NFC');
}

/** Whether `text` has more than `limit` code points; a text of at most `limit` UTF-16 units has not. */
const longerThan = (text: string, limit: number): boolean => text.length > limit && codePointLength(text) > limit;

export function isValidNamePart(part: string): boolean {
  // The regex counts UTF-16 units; 63 is a limit in code points, checked separately.
  return !longerThan(part, 63) && PART.test(part);
}

/** Parses a name ID, returning its canonical parts, or null when it breaks any rule. */
export function parseNameId(input: string): NameId | null {
  const name = canonicalName(input);
  if (longerThan(name, MAX_NAME_LENGTH)) return null;
  const at = name.indexOf('@');
  if (at < 0 || name.indexOf('@', at + 1) >= 0) return null;
  const local = name.slice(0, at);
  const domain = name.slice(at + 1);
  if (!isValidNamePart(local) || !isValidNamePart(domain)) return null;
  return { name, local, domain };
}

/** Parses a namespace (top-level name) on its own, returning its canonical form or null. */
export function parseNamespace(input: string): string | null {
  const name = canonicalName(input);
  return isValidNamePart(name) ? name : null;
}

/** Whether a value read from JSON is a list of strings: names as given, not yet checked. */
export function isNameList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((name) => typeof name === 'string');
}
