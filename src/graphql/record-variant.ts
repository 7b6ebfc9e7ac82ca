/**
 * Which GraphQL type shows a stored record. A record gets a typed variant only when its type is
 * one of the specification's and its value has that type's shape; everything else is a
 * GenericRecord, so no stored record is ever dropped or made to fail.
 */
import type { ProfileRecord } from '../db/queries.js';
import { isStringMap } from '../profiles/record-types.js';

export const TEXT_RECORD_TYPES = ['name', 'email', 'website', 'tg_bot', 'web_url', 'web3_url'] as const;
export const GENERAL_MAP_RECORD_TYPES = ['link', 'notes', 'img'] as const;

export type RecordVariant =
  | 'TextRecord'
  | 'PhoneRecord'
  | 'SocialRecord'
  | 'CryptoRecord'
  | 'MapRecord'
  | 'GenericRecord';

export function recordVariant(record: Pick<ProfileRecord, 'type' | 'value'>): RecordVariant {
  const { type, value } = record;
  if (typeof value === 'string') {
    if ((TEXT_RECORD_TYPES as readonly string[]).includes(type)) return 'TextRecord';
    if (type === 'phone') return 'PhoneRecord';
    return 'GenericRecord';
  }
  if (isStringMap(value)) {
    if (type === 'social') return 'SocialRecord';
    if (type === 'crypto') return 'CryptoRecord';
    if ((GENERAL_MAP_RECORD_TYPES as readonly string[]).includes(type)) return 'MapRecord';
  }
  return 'GenericRecord';
}

/** The entries of a map value in stored order. */
export function entriesOf(value: unknown): Array<{ key: string; value: string }> {
  if (!isStringMap(value)) return [];
  return Object.entries(value).map(([key, entry]) => ({ key, value: entry }));
}

/** One entry of a map value; own keys only, so `constructor` or `__proto__` find nothing by accident. */
export function entryOf(value: unknown, key: string): string | null {
  if (!isStringMap(value) || !Object.hasOwn(value, key)) return null;
  return value[key] ?? null;
}

/** The string of a string value (variants guarantee the shape; this keeps the types honest). */
export function textOf(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError('record value is not a string');
  return value;
}
