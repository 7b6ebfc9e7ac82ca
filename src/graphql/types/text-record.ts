import type { ProfileRecord } from '../../db/queries.js';
import { builder } from '../builder.js';
import { textOf } from '../record-variant.js';
import { ProfileRecordRef } from './profile-record.js';

export const TextRecordRef = builder.objectRef<ProfileRecord>('TextRecord').implement({
  description:
    'A string record: name, email, website, tg_bot, web_url or web3_url. May be the empty string when unset.',
  interfaces: [ProfileRecordRef],
  fields: (t) => ({
    value: t.string({ resolve: (record) => textOf(record.value) }),
  }),
});
