import type { ProfileRecord } from '../../db/queries.js';
import { builder } from '../builder.js';
import { recordVariant } from '../record-variant.js';

/** A user-defined record; the concrete type says how to read its value. */
export const ProfileRecordRef = builder.interfaceRef<ProfileRecord>('ProfileRecord').implement({
  description:
    'A user-defined record of a profile. Locate records by `type`; keys are stored data and may change. ' +
    'Query the variants with inline fragments for typed values, or `raw` for the value exactly as stored.',
  resolveType: (record) => recordVariant(record),
  fields: (t) => ({
    key: t.string({
      description: 'The numeric key, as a string (the key of the REST `records` object).',
      resolve: (record) => String(record.key),
    }),
    type: t.exposeString('type', { description: 'The record type, e.g. `name`, `phone`, `social`.' }),
    raw: t.field({
      type: 'JSON',
      description: 'The value exactly as stored: a string, or an object of string to string (the REST value).',
      resolve: (record) => record.value,
    }),
  }),
});
