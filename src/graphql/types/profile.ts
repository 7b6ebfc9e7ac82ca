import type { PublicProfile } from '../../db/queries.js';
import { codePointLength } from '../../names/name-id.js';
import { builder } from '../builder.js';
import { AttributeRef, type AttributeShape } from './attribute.js';
import { ProfileRecordRef } from './profile-record.js';

export const ProfileRef = builder.objectRef<PublicProfile>('Profile').implement({
  description: 'The public profile of a name ID. Private e-mails (creator, namespace owner) are not part of it.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The canonical name ID (NFC, lower case), e.g. `demo@me`.' }),
    description: t.exposeString('description', { description: 'Short biography; empty when unset.' }),
    image: t.exposeString('image', { description: 'Avatar URL; empty when unset.' }),
    localPart: t.exposeString('localPart', { description: 'The part before `@`.' }),
    namespace: t.exposeString('namespace', { description: 'The top-level name: the part after `@`.' }),
    level: t.exposeInt('level'),
    length: t.int({
      description: 'Characters (Unicode code points) of the canonical name ID.',
      resolve: (profile) => codePointLength(profile.name),
    }),
    version: t.exposeString('contentHash', {
      description: 'Changes exactly when the public content changes (the REST ETag).',
    }),
    attributes: t.field({
      type: [AttributeRef],
      description: 'The traits `domain`, `level` and `length`, in that order.',
      resolve: (profile) => attributesOf(profile),
    }),
    records: t.field({
      type: [ProfileRecordRef],
      description: 'Every record, in ascending key order.',
      resolve: (profile, _args, context) => context.loaders.recordsByProfileId.load(profile.id),
    }),
    record: t.field({
      type: ProfileRecordRef,
      nullable: true,
      description: 'The record of this type with the lowest key, or null when there is none.',
      args: { type: t.arg.string({ required: true, description: 'A record type, e.g. `phone`.' }) },
      resolve: async (profile, args, context) => {
        const records = await context.loaders.recordsByProfileId.load(profile.id);
        return records.find((record) => record.type === args.type) ?? null;
      },
    }),
  }),
});

function attributesOf(profile: PublicProfile): AttributeShape[] {
  return [
    { traitType: 'domain', value: { kind: 'string', value: profile.name } },
    { traitType: 'level', value: { kind: 'int', value: profile.level } },
    { traitType: 'length', value: { kind: 'int', value: codePointLength(profile.name) } },
  ];
}
