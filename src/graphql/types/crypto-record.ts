import type { ProfileRecord } from '../../db/queries.js';
import { CRYPTO_KEYS } from '../../profiles/record-types.js';
import { builder } from '../builder.js';
import { entriesOf, entryOf } from '../record-variant.js';
import { ProfileRecordRef } from './profile-record.js';
import { RecordEntryRef } from './record-entry.js';

export const CryptoRecordRef = builder.objectRef<ProfileRecord>('CryptoRecord').implement({
  description: 'Wallet addresses by currency. `entries` has every stored key, also ones not listed as fields.',
  interfaces: [ProfileRecordRef],
  fields: (t) => ({
    entries: t.field({ type: [RecordEntryRef], resolve: (record) => entriesOf(record.value) }),
    ...Object.fromEntries(
      CRYPTO_KEYS.map((currency) => [
        currency,
        t.string({
          nullable: true,
          description: `The ${currency} address, or null.`,
          resolve: (record) => entryOf(record.value, currency),
        }),
      ]),
    ),
  }),
});
