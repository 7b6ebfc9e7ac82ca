/**
 * The listing queries of discovery: names by prefix and names by wallet address. Both are keyset
 * pages in code-point order (collation "C", the same on every database whatever its default
 * collation), answered by one range scan of an index built for it (drizzle/0001_discovery.sql):
 * their cost depends on the page size, not on the number of profiles. Tests read their plans.
 */
import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { Database } from './database.js';
import { profiles, walletAddresses } from './schema.js';

export interface NamePageQuery {
  /** Names strictly after this one (a cursor's position); none for the first page. */
  after: string | undefined;
  /** Rows to read: the page size plus one, to learn whether there is a next page. */
  limit: number;
}

export interface PrefixQuery extends NamePageQuery {
  /** Canonical; no "@". */
  prefix: string;
  /** Canonical namespace, or undefined for every namespace. */
  namespace: string | undefined;
}

/**
 * Above every character a name can hold: `prefix + MAX_CHAR` bounds the names that start with
 * `prefix` from above (in code-point order, which "C" is for UTF-8).
 */
const MAX_CHAR = '\u{10FFFF}';

const profileNameC = sql`${profiles.name} collate "C"`;

/**
 * Names whose local part starts with `prefix`. A prefix holds no "@", so that is the same as
 * the name starting with it: a range of the name index (`profiles_name_c_idx`, or
 * `profiles_namespace_name_c_idx` within a namespace).
 */
export function namesByPrefixQuery(db: Database, query: PrefixQuery) {
  const conditions: SQL[] = [
    sql`${profileNameC} >= ${query.prefix}`,
    sql`${profileNameC} < ${query.prefix + MAX_CHAR}`,
  ];
  if (query.after !== undefined) conditions.push(sql`${profileNameC} > ${query.after}`);
  if (query.namespace !== undefined) conditions.push(eq(profiles.namespace, query.namespace));
  return db
    .select({ name: profiles.name })
    .from(profiles)
    .where(and(...conditions))
    .orderBy(profileNameC)
    .limit(query.limit);
}

export async function findNamesByPrefix(db: Database, query: PrefixQuery): Promise<string[]> {
  return (await namesByPrefixQuery(db, query)).map((row) => row.name);
}

export interface WalletQuery extends NamePageQuery {
  /** The address as matched (walletAddressKey). */
  addressKey: string;
}

const walletNameC = sql<string>`${walletAddresses.name} collate "C"`;

/**
 * Names of the profiles that list an address in a `crypto` record. A profile that lists it
 * several times (under `eth` and `matic`, say) is one name: DISTINCT over the index order
 * (`wallet_addresses_lookup_idx`) drops repeats without sorting.
 */
export function namesByWalletQuery(db: Database, query: WalletQuery) {
  const conditions: SQL[] = [sql`${walletAddresses.addressKey} = ${query.addressKey}`];
  if (query.after !== undefined) conditions.push(sql`${walletNameC} > ${query.after}`);
  return db
    .selectDistinct({ name: walletNameC })
    .from(walletAddresses)
    .where(and(...conditions))
    .orderBy(walletNameC)
    .limit(query.limit);
}

export async function findNamesByWallet(db: Database, query: WalletQuery): Promise<string[]> {
  return (await namesByWalletQuery(db, query)).map((row) => row.name);
}
