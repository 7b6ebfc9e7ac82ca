import type { ProfileRecord } from '../../db/queries.js';
import { phoneNumbers } from '../../profiles/record-types.js';
import { builder } from '../builder.js';
import { textOf } from '../record-variant.js';
import { ProfileRecordRef } from './profile-record.js';

export const PhoneRecordRef = builder.objectRef<ProfileRecord>('PhoneRecord').implement({
  description: 'The phone record: a comma-separated list of numbers.',
  interfaces: [ProfileRecordRef],
  fields: (t) => ({
    value: t.string({ description: 'The list as stored.', resolve: (record) => textOf(record.value) }),
    numbers: t.stringList({
      description: 'The single numbers: the value split on commas, trimmed, blanks left out.',
      resolve: (record) => phoneNumbers(textOf(record.value)),
    }),
  }),
});
