import type { ProfileRecord } from '../../db/queries.js';
import { builder } from '../builder.js';
import { entriesOf, entryOf } from '../record-variant.js';
import { ProfileRecordRef } from './profile-record.js';
import { RecordEntryRef } from './record-entry.js';

export const MapRecordRef = builder.objectRef<ProfileRecord>('MapRecord').implement({
  description: 'A record of labels to texts: link (label to URL), notes (label to text) or img (label to image URL).',
  interfaces: [ProfileRecordRef],
  fields: (t) => ({
    entries: t.field({ type: [RecordEntryRef], resolve: (record) => entriesOf(record.value) }),
    entry: t.string({
      nullable: true,
      description: 'The value under one label, or null.',
      args: { key: t.arg.string({ required: true }) },
      resolve: (record, args) => entryOf(record.value, args.key),
    }),
  }),
});
