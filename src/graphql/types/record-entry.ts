import { builder } from '../builder.js';

export interface RecordEntryShape {
  key: string;
  value: string;
}

export const RecordEntryRef = builder.objectRef<RecordEntryShape>('RecordEntry').implement({
  description: 'One entry of a map-valued record (social, link, crypto, notes, img).',
  fields: (t) => ({
    key: t.exposeString('key'),
    value: t.exposeString('value'),
  }),
});
