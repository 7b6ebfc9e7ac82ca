/**
 * The record types the specification names and the shape of their values. Record types are
 * stored data: a type not listed here is kept and served as it is, as long as its value is a
 * string or an object of string to string.
 */

/** Types whose value is a string. `phone` is a comma-separated list of numbers. */
export const STRING_RECORD_TYPES = ['name', 'email', 'website', 'phone', 'tg_bot', 'web_url', 'web3_url'] as const;

/** Types whose value is an object of string to string. */
export const MAP_RECORD_TYPES = ['social', 'link', 'crypto', 'notes', 'img'] as const;

type StringRecordType = (typeof STRING_RECORD_TYPES)[number];
type MapRecordType = (typeof MAP_RECORD_TYPES)[number];

/** Keys of `social` records that the specification lists (usable to pick icons). */
export const SOCIAL_KEYS = [
  'tiktok',
  'discord',
  'twitter',
  'youtube',
  'facebook',
  'linkedin',
  'telegram',
  'instagram',
] as const;

/** Keys of `crypto` records that the specification lists. */
export const CRYPTO_KEYS = ['btc', 'eth', 'sol'] as const;

function isStringRecordType(type: string): type is StringRecordType {
  return (STRING_RECORD_TYPES as readonly string[]).includes(type);
}

function isMapRecordType(type: string): type is MapRecordType {
  return (MAP_RECORD_TYPES as readonly string[]).includes(type);
}

export function isStringMap(value: unknown): value is Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((entry) => typeof entry === 'string');
}

/**
 * Why `value` cannot be the value of a record of `type`, or null when it can. Known types must
 * have their specified shape; other types may hold either shape.
 */
export function recordValueProblem(type: string, value: unknown): string | null {
  if (isStringRecordType(type)) {
    return typeof value === 'string' ? null : `record type "${type}" needs a string value`;
  }
  if (isMapRecordType(type)) {
    return isStringMap(value) ? null : `record type "${type}" needs an object of string to string`;
  }
  return typeof value === 'string' || isStringMap(value)
    ? null
    : `record type "${type}" needs a string or an object of string to string`;
}

/** Splits a `phone` value on commas into single numbers, dropping blanks. */
export function phoneNumbers(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}
