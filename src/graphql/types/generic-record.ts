import type { ProfileRecord } from '../../db/queries.js';
import { builder } from '../builder.js';
import { ProfileRecordRef } from './profile-record.js';

export const GenericRecordRef = builder.objectRef<ProfileRecord>('GenericRecord').implement({
  description:
    'A record of a type this API has no variant for, or of a known type whose stored value has another shape. ' +
    'Read its value from `raw`.',
  interfaces: [ProfileRecordRef],
  fields: () => ({}),
});
