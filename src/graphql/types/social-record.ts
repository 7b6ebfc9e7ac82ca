import type { ProfileRecord } from '../../db/queries.js';
import { SOCIAL_KEYS } from '../../profiles/record-types.js';
import { builder } from '../builder.js';
import { entriesOf, entryOf } from '../record-variant.js';
import { ProfileRecordRef } from './profile-record.js';
import { RecordEntryRef } from './record-entry.js';

export const SocialRecordRef = builder.objectRef<ProfileRecord>('SocialRecord').implement({
  description: 'Social media handles by network. `entries` has every stored key, also ones not listed as fields.',
  interfaces: [ProfileRecordRef],
  fields: (t) => ({
    entries: t.field({ type: [RecordEntryRef], resolve: (record) => entriesOf(record.value) }),
    ...Object.fromEntries(
      SOCIAL_KEYS.map((network) => [
        network,
        t.string({
          nullable: true,
          description: `The ${network} handle, or null.`,
          resolve: (record) => entryOf(record.value, network),
        }),
      ]),
    ),
  }),
});
