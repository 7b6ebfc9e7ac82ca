/**
 * Records in GraphQL: the ProfileRecord interface and its typed variants. A record gets a typed
 * variant only when its type is one of the specification's and its value has that type's shape;
 * everything else is a GenericRecord, so no stored record is ever dropped or made to fail.
 * Map entries come in stored order (see src/profiles/record-value.ts).
 */
import type { ProfileRecord } from '../../../profiles/profile.js';
import { CRYPTO_KEYS, isStringMap, phoneNumbers, SOCIAL_KEYS } from '../../../profiles/record-types.js';
import { NAMES_A_RECORD_TYPE_FOR_EVERY_RECORD, RESOLVED_BY_TYPE_AND_SHAPE } from '../../../profiles/stored-records.js';
import type { Builder, InterfaceOf, ObjectOf } from '../builder.js';

const TEXT_RECORD_TYPES: ReadonlySet<string> = new Set(['name', 'email', 'website', 'tg_bot', 'web_url', 'web3_url']);
const GENERAL_MAP_RECORD_TYPES: ReadonlySet<string> = new Set(['link', 'notes', 'img']);

export type RecordVariant =
  | 'TextRecord'
  | 'PhoneRecord'
  | 'SocialRecord'
  | 'CryptoRecord'
  | 'MapRecord'
  | 'GenericRecord';

/** The variant of a record, from its value's shape: the value is not parsed for it. */
export function recordVariant({ type, shape }: Pick<ProfileRecord, 'type' | 'shape'>): RecordVariant {
  if (shape === 'string') {
    if (TEXT_RECORD_TYPES.has(type)) return 'TextRecord';
    return type === 'phone' ? 'PhoneRecord' : 'GenericRecord';
  }
  if (shape === 'stringMap') {
    if (type === 'social') return 'SocialRecord';
    if (type === 'crypto') return 'CryptoRecord';
    if (GENERAL_MAP_RECORD_TYPES.has(type)) return 'MapRecord';
  }
  return 'GenericRecord';
}

interface RecordEntryShape {
  key: string;
  value: string;
}

/** The entries of a map value in stored order. */
function entriesOf(value: unknown): RecordEntryShape[] {
  if (!isStringMap(value)) return [];
  return Object.entries(value).map(([key, entry]) => ({ key, value: entry }));
}

/** One entry of a map value; own keys only, so `constructor` or `__proto__` find nothing by accident. */
function entryOf(value: unknown, key: string): string | null {
  if (!isStringMap(value) || !Object.hasOwn(value, key)) return null;
  return value[key] ?? null;
}

/** The string of a string value (variants guarantee the shape; this keeps the types honest). */
function textOf(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError('record value is not a string');
  return value;
}

interface RecordRefs {
  RecordEntryRef: ObjectOf<RecordEntryShape>;
  ProfileRecordRef: InterfaceOf<ProfileRecord>;
}

/**
 * The ProfileRecord interface, RecordEntry and the variants, in this order (the order of
 * `schema.graphql`); returns the interface, the type of `Profile.records`.
 */
export function registerRecordTypes(builder: Builder): InterfaceOf<ProfileRecord> {
  const ProfileRecordRef = registerProfileRecord(builder);
  const refs: RecordRefs = { RecordEntryRef: registerRecordEntry(builder), ProfileRecordRef };
  registerTextRecord(builder, refs);
  registerPhoneRecord(builder, refs);
  registerKeyedMapRecord(builder, refs, {
    name: 'SocialRecord',
    description: 'Social media handles by network. `entries` has every stored key, also ones not listed as fields.',
    keys: SOCIAL_KEYS,
    what: 'handle',
  });
  registerKeyedMapRecord(builder, refs, {
    name: 'CryptoRecord',
    description: 'Wallet addresses by currency. `entries` has every stored key, also ones not listed as fields.',
    keys: CRYPTO_KEYS,
    what: 'address',
  });
  registerMapRecord(builder, refs);
  registerGenericRecord(builder, refs);
  return ProfileRecordRef;
}

function registerProfileRecord(builder: Builder): InterfaceOf<ProfileRecord> {
  return builder.interfaceRef<ProfileRecord>('ProfileRecord').implement({
    description:
      'A user-defined record of a profile. Locate records by `type`; keys are stored data and may change. ' +
      'Query the variants with inline fragments for typed values, or `raw` for the value exactly as stored.',
    resolveType: (record) => recordVariant(record),
    // The promises the stored-text writer may rely on (src/graphql/execution/stored-records-writer.ts):
    // the variant depends on nothing but the record's type and shape, as recordVariant's parameter
    // says, and is always one of the variants registered below, as its return type says.
    extensions: { [RESOLVED_BY_TYPE_AND_SHAPE]: true, [NAMES_A_RECORD_TYPE_FOR_EVERY_RECORD]: true },
    fields: (t) => ({
      key: t.exposeString('key', {
        description: 'The numeric key, as a string (the key of the REST `records` object).',
      }),
      type: t.exposeString('type', { description: 'The record type, e.g. `name`, `phone`, `social`.' }),
      raw: t.expose('raw', {
        type: 'JSON',
        description: 'The value exactly as stored: a string, or an object of string to string (the REST value).',
      }),
    }),
  });
}

function registerRecordEntry(builder: Builder): ObjectOf<RecordEntryShape> {
  return builder.objectRef<RecordEntryShape>('RecordEntry').implement({
    description: 'One entry of a map-valued record (social, link, crypto, notes, img).',
    fields: (t) => ({
      key: t.exposeString('key', { description: 'The label, e.g. `twitter`, `Blog` or `btc`.' }),
      value: t.exposeString('value', { description: 'The text under the label: a handle, a URL, an address.' }),
    }),
  });
}

function registerTextRecord(builder: Builder, { ProfileRecordRef }: RecordRefs): void {
  builder.objectRef<ProfileRecord>('TextRecord').implement({
    description:
      'A string record: name, email, website, tg_bot, web_url or web3_url. May be the empty string when unset.',
    interfaces: [ProfileRecordRef],
    fields: (t) => ({
      value: t.string({ description: 'The text; empty when unset.', resolve: (record) => textOf(record.raw) }),
    }),
  });
}

function registerPhoneRecord(builder: Builder, { ProfileRecordRef }: RecordRefs): void {
  builder.objectRef<ProfileRecord>('PhoneRecord').implement({
    description: 'The phone record: a comma-separated list of numbers.',
    interfaces: [ProfileRecordRef],
    fields: (t) => ({
      value: t.string({ description: 'The list as stored.', resolve: (record) => textOf(record.raw) }),
      numbers: t.stringList({
        description: 'The single numbers: the value split on commas, trimmed, blanks left out.',
        resolve: (record) => phoneNumbers(textOf(record.raw)),
      }),
    }),
  });
}

interface KeyedMapRecord {
  name: string;
  description: string;
  keys: readonly string[];
  what: string;
}

/** A map record with one nullable field per well-known key, besides every entry. */
function registerKeyedMapRecord(
  builder: Builder,
  { ProfileRecordRef, RecordEntryRef }: RecordRefs,
  { name, description, keys, what }: KeyedMapRecord,
): void {
  builder.objectRef<ProfileRecord>(name).implement({
    description,
    interfaces: [ProfileRecordRef],
    fields: (t) => ({
      entries: t.field({
        type: [RecordEntryRef],
        description: 'Every entry, in stored order, also those without a field of their own.',
        resolve: (record) => entriesOf(record.raw),
      }),
      ...Object.fromEntries(
        keys.map((key) => [
          key,
          t.string({
            nullable: true,
            description: `The ${key} ${what}, or null.`,
            resolve: (record) => entryOf(record.raw, key),
          }),
        ]),
      ),
    }),
  });
}

function registerMapRecord(builder: Builder, { ProfileRecordRef, RecordEntryRef }: RecordRefs): void {
  builder.objectRef<ProfileRecord>('MapRecord').implement({
    description: 'A record of labels to texts: link (label to URL), notes (label to text) or img (label to image URL).',
    interfaces: [ProfileRecordRef],
    fields: (t) => ({
      entries: t.field({
        type: [RecordEntryRef],
        description: 'Every entry, in stored order.',
        resolve: (record) => entriesOf(record.raw),
      }),
      entry: t.string({
        nullable: true,
        description: 'The value under one label, or null.',
        args: { key: t.arg.string({ required: true, description: 'The label, e.g. `Blog`.' }) },
        resolve: (record, args) => entryOf(record.raw, args.key),
      }),
    }),
  });
}

function registerGenericRecord(builder: Builder, { ProfileRecordRef }: RecordRefs): void {
  builder.objectRef<ProfileRecord>('GenericRecord').implement({
    description:
      'A record of a type this API has no variant for, or of a known type whose stored value has another shape. ' +
      'Read its value from `raw`.',
    interfaces: [ProfileRecordRef],
    fields: () => ({}),
  });
}
