/**
 * The Profile type and its NFT-style attributes. Fields read the service's Profile as loaded:
 * the records come with it, so no field of a profile costs another query.
 */
import type { Profile, ProfileRecord } from '../../../profiles/profile.js';
import { AVATAR_SIZE } from '../../../service/avatars.js';
import type { Builder, InterfaceOf, ObjectOf } from '../builder.js';

/** The value of an attribute: a string for `domain`, an integer for `level` and `length`. */
type AttributeValueShape = { kind: 'string'; value: string } | { kind: 'int'; value: number };

interface AttributeShape {
  traitType: 'domain' | 'level' | 'length';
  value: AttributeValueShape;
}

/** Attribute and the types of its value; returns Attribute, the type of `Profile.attributes`. */
function registerAttribute(builder: Builder): ObjectOf<AttributeShape> {
  const StringAttributeValueRef = builder
    .objectRef<Extract<AttributeValueShape, { kind: 'string' }>>('StringAttributeValue')
    .implement({
      description: 'The string value of an attribute (`domain`).',
      fields: (t) => ({ value: t.exposeString('value', { description: 'The value, e.g. the name ID.' }) }),
    });

  const IntAttributeValueRef = builder
    .objectRef<Extract<AttributeValueShape, { kind: 'int' }>>('IntAttributeValue')
    .implement({
      description: 'The integer value of an attribute (`level`, `length`).',
      fields: (t) => ({ value: t.exposeInt('value', { description: 'The value, e.g. the level.' }) }),
    });

  const AttributeValueRef = builder.unionType('AttributeValue', {
    description: 'A string value (`domain`) or an integer value (`level`, `length`).',
    types: [StringAttributeValueRef, IntAttributeValueRef],
    resolveType: (value) => (value.kind === 'string' ? StringAttributeValueRef : IntAttributeValueRef),
  });

  const AttributeRef = builder.objectRef<AttributeShape>('Attribute').implement({
    description: 'A metadata trait in the NFT metadata format (`trait_type` and `value` in REST).',
    fields: (t) => ({
      traitType: t.exposeString('traitType', { description: '`domain`, `level` or `length`.' }),
      value: t.field({
        type: AttributeValueRef,
        description: 'A string for `domain`, an integer for `level` and `length`.',
        resolve: (attribute) => attribute.value,
      }),
    }),
  });

  return AttributeRef;
}

function attributesOf(profile: Profile): AttributeShape[] {
  return [
    { traitType: 'domain', value: { kind: 'string', value: profile.name } },
    { traitType: 'level', value: { kind: 'int', value: profile.level } },
    { traitType: 'length', value: { kind: 'int', value: profile.length } },
  ];
}

/**
 * The Profile type with its own fields; more are added by ./wallets.ts. Returns Profile, the
 * type the queries and the subscription answer with.
 */
export function registerProfileType(builder: Builder, ProfileRecordRef: InterfaceOf<ProfileRecord>): ObjectOf<Profile> {
  const AttributeRef = registerAttribute(builder);
  return builder.objectRef<Profile>('Profile').implement({
    description: 'The public profile of a name ID. Private e-mails (creator, namespace owner) are not part of it.',
    fields: (t) => ({
      id: t.id({
        description:
          'A stable identifier derived from the name (`Profile:<name ID>`), so client caches (Apollo, urql, Relay) ' +
          'normalise profiles without configuration.',
        resolve: (profile) => `Profile:${profile.name}`,
      }),
      name: t.exposeString('name', { description: 'The canonical name ID (NFC, lower case), e.g. `demo@me`.' }),
      description: t.exposeString('description', { description: 'Short biography; empty when unset.' }),
      image: t.exposeString('image', { description: 'Avatar URL; empty when unset.' }),
      localPart: t.exposeString('localPart', { description: 'The part before `@`.' }),
      namespace: t.exposeString('namespace', { description: 'The top-level name: the part after `@`.' }),
      level: t.exposeInt('level', { description: 'The level of the name (the `level` trait).' }),
      length: t.int({
        description: 'Characters (Unicode code points) of the canonical name ID (the `length` trait).',
        resolve: (profile) => profile.length,
      }),
      version: t.exposeString('contentHash', {
        description: 'Changes exactly when the public content changes (the REST ETag).',
      }),
      avatarUrl: t.string({
        description:
          'The avatar as a URL to put in an `<img>`: `<PUBLIC_URL>/api/<name>/avatar?size=<size>&v=<version>`. It ' +
          'answers `image`, when that is an http(s) URL, resized to size×size (WebP, PNG or JPEG), else a generated ' +
          'SVG with the initial. `v` changes exactly when that answer changes, so the URL may be cached for good.',
        args: {
          size: t.arg.int({
            defaultValue: AVATAR_SIZE.default,
            description: `Width and height in pixels, ${AVATAR_SIZE.min} to ${AVATAR_SIZE.max} (null: the default).`,
          }),
        },
        resolve: (profile, args, { avatars }) => avatars.avatarUrl(profile, args.size ?? AVATAR_SIZE.default),
      }),
      attributes: t.field({
        type: [AttributeRef],
        description: 'The traits `domain`, `level` and `length`, in that order.',
        resolve: attributesOf,
      }),
      records: t.expose('records', {
        type: [ProfileRecordRef],
        description: 'Every record, in ascending key order.',
      }),
      record: t.field({
        type: ProfileRecordRef,
        nullable: true,
        description: 'The record of this type with the lowest key, or null when there is none.',
        args: { type: t.arg.string({ required: true, description: 'A record type, e.g. `phone`.' }) },
        resolve: (profile, args) => profile.records.find((record) => record.type === args.type) ?? null,
      }),
    }),
  });
}
