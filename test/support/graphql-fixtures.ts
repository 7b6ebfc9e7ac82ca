/**
 * Profiles the GraphQL tests query, written straight into the database. Kept in this one file so
 * it can be swapped for the demo data (src/data) once that exists.
 *
 * Every record variant appears, as well as unknown record types, known types with an unexpected
 * value shape, empty values, non-ASCII names and known private e-mails (which no response may
 * contain, except an owner check echoing what the client itself sent).
 */

import type { ProfileObject } from '../../src/data/data-line.js';
import { newChangeId, notifyProfileChanges } from '../../src/db/change-notifications.js';
import type { Database } from '../../src/db/database.js';
import { sql } from '../../src/db/drizzle.js';
import { namespaces, profiles, type RecordValue, records } from '../../src/db/schema.js';
import { parseNameId } from '../../src/names/name-id.js';
import { contentHash } from '../../src/profiles/content-hash.js';
import { CONTRACT_EXAMPLE_RECORDS } from './contract-example.js';

export const PRIVATE_EMAILS = {
  meOwner: 'owner.me@private.example',
  otherOwner: 'owner.other@private.example',
  demoCreator: 'maker.demo@private.example',
  bulkOwner: 'owner.bulk@private.example',
} as const;

/** The contract's example profile `demo@me`, record for record. */
export const DEMO_RECORDS = CONTRACT_EXAMPLE_RECORDS;

/** Records no typed variant fits, and ordering cases (`10` after `9`, two of one type). */
export const ODD_RECORDS: Record<string, { type: string; value: RecordValue }> = {
  '0': { type: 'pgp', value: 'ABCD 1234' },
  '2': { type: 'wallets', value: { doge: 'D123' } },
  '3': { type: 'name', value: { first: 'Not', last: 'A string' } },
  '4': { type: 'social', value: 'not a map' },
  '9': { type: 'name', value: 'First name record' },
  '10': { type: 'name', value: 'Second name record' },
  '11': { type: 'phone', value: ' +1 555 0100 , ,+44 20 7946 0000,' },
  '12': { type: 'social', value: { mastodon: '@odd@example.social', twitter: 'odd' } },
  '13': { type: 'crypto', value: { doge: 'D999' } },
};

/** A profile as the import format has it, without the `kind` tag. */
export type FixtureProfile = Omit<ProfileObject, 'kind'>;

export const BULK_PROFILE_COUNT = 60;
export const bulkName = (index: number): string => `p${index}@bulk`;

const FIXTURE_NAMESPACES = [
  { name: 'me', ownerEmail: PRIVATE_EMAILS.meOwner },
  { name: 'other', ownerEmail: PRIVATE_EMAILS.otherOwner },
  { name: 'café', ownerEmail: PRIVATE_EMAILS.otherOwner },
  { name: 'bulk', ownerEmail: PRIVATE_EMAILS.bulkOwner },
];

export const FIXTURE_PROFILES: FixtureProfile[] = [
  {
    name: 'demo@me',
    creatorEmail: PRIVATE_EMAILS.demoCreator,
    description: 'A sample profile that shows every kind of record.',
    image: 'https://img.example.org/avatars/demo@me.jpg',
    level: 2,
    records: DEMO_RECORDS,
  },
  { name: 'empty@me', creatorEmail: 'someone.else@private.example' },
  { name: 'odd@me', creatorEmail: 'someone.else@private.example', level: 5, records: ODD_RECORDS },
  // The namespace owner created this one too: owner and creator at once.
  { name: 'self@me', creatorEmail: PRIVATE_EMAILS.meOwner },
  { name: 'x@other', creatorEmail: PRIVATE_EMAILS.demoCreator, description: 'Created by the demo maker.' },
  {
    name: 'josé@café',
    creatorEmail: 'someone.else@private.example',
    description: 'Ünïcödé',
    records: { '1': { type: 'name', value: 'José Ñandú 🦤' } },
  },
  ...Array.from({ length: BULK_PROFILE_COUNT }, (_, index) => ({
    name: bulkName(index),
    creatorEmail: PRIVATE_EMAILS.bulkOwner,
    level: index,
    records: {
      '1': { type: 'name', value: `Bulk ${index}` },
      '4': { type: 'phone', value: `+1555${String(index).padStart(4, '0')}` },
    },
  })),
];

export async function insertGraphQLFixtures(db: Database): Promise<void> {
  await db.insert(namespaces).values(FIXTURE_NAMESPACES);
  for (const fixture of FIXTURE_PROFILES) {
    const nameId = parseNameId(fixture.name);
    if (nameId === null) throw new Error(`fixture name ${fixture.name} is invalid`);
    const recordRows = Object.entries(fixture.records ?? {})
      .map(([key, record]) => ({ key: Number(key), type: record.type, value: record.value }))
      .sort((a, b) => a.key - b.key);
    const content = {
      name: nameId.name,
      description: fixture.description ?? '',
      image: fixture.image ?? '',
      level: fixture.level ?? 0,
    };
    const [row] = await db
      .insert(profiles)
      .values({
        ...content,
        localPart: nameId.local,
        namespace: nameId.domain,
        creatorEmail: fixture.creatorEmail,
        contentHash: contentHash({ ...content, records: recordRows }),
      })
      .returning({ id: profiles.id });
    if (recordRows.length > 0) {
      await db.insert(records).values(recordRows.map((record) => ({ ...record, profileId: row!.id })));
    }
  }
}

export /** Changes a profile's description the way every writer must: with a notification in the same transaction. */
async function changeDescription(db: Database, name: string, description: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .update(profiles)
      .set({ description, contentHash: contentHash({ name, description, image: '', level: 0, records: [] }) })
      .where(sql`${profiles.name} = ${name}`);
    await notifyProfileChanges(tx, newChangeId(), [name]);
  });
}

/** A lookup of one profile by the variable `n`, with `selection` under it. */
export const PROFILE_QUERY = (selection: string) => `query P($n: String!) { profile(name: $n) { ${selection} } }`;

/** Queries whose answers are kept (src/graphql/execution/profile-answers.ts): every variant, unions, fragments, aliases, wallets, avatar URLs. */
export const KEPT_ANSWER_QUERIES = [
  PROFILE_QUERY('name description image level records { key type raw }'),
  PROFILE_QUERY(
    'id name version localPart namespace length avatarUrl ' +
      'attributes { traitType value { __typename ... on StringAttributeValue { text: value } ... on IntAttributeValue { number: value } } }',
  ),
  `query Records($who: String!) { p: profile(name: $who) { records { __typename key ...V } } }
   fragment V on ProfileRecord {
     ... on TextRecord { value } ... on PhoneRecord { value numbers }
     ... on SocialRecord { entries { key value } twitter handle: telegram }
     ... on CryptoRecord { entries { key value } btc eth } ... on MapRecord { entries { key value } }
     ... on GenericRecord { raw }
   }`,
  PROFILE_QUERY('wallets { symbol address chain accountId } first: name'),
];
