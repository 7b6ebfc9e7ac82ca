/**
 * The listing queries of discovery: names by prefix and names by wallet address. Both are keyset
 * pages in code-point order (collation "C", the same on every database whatever its default
 * collation), answered by one range scan of an index built for it (drizzle/0001_discovery.sql):
 * their cost depends on the page size, not on the number of profiles. Tests read their plans.
 */

import { and, type SQL, sql } from './drizzle.js';
import type { Database } from './schema.js';
import { profiles, walletAddresses } from './schema.js';

interface NamePageQuery {
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
const walletNameC = sql<string>`${walletAddresses.name} collate "C"`;

/** Which conditions a page has: its statement differs with them, its parameters do not. */
interface PageShape {
  after: boolean;
  namespace: boolean;
}

/** Values of a statement: real ones (EXPLAIN in tests) or placeholders (prepared statements). */
type Values = Record<'prefix' | 'upper' | 'after' | 'namespace' | 'addressKey' | 'limit', unknown>;

/**
 * Names whose local part starts with `prefix`. A prefix holds no "@", so that is the same as
 * the name starting with it: a range of the name index (`profiles_name_c_idx`, or
 * `profiles_namespace_name_c_idx` within a namespace).
 */
function prefixSelect(db: Database, shape: PageShape, values: Values) {
  const conditions: SQL[] = [sql`${profileNameC} >= ${values.prefix}`, sql`${profileNameC} < ${values.upper}`];
  if (shape.after) conditions.push(sql`${profileNameC} > ${values.after}`);
  if (shape.namespace) conditions.push(sql`${profiles.namespace} = ${values.namespace}`);
  return db
    .select({ name: profiles.name })
    .from(profiles)
    .where(and(...conditions))
    .orderBy(profileNameC)
    .limit(values.limit as number);
}

/**
 * Names of the profiles that list an address in a `crypto` record. A profile that lists it
 * several times (under `eth` and `matic`, say) is one name: DISTINCT over the index order
 * (`wallet_addresses_lookup_idx`) drops repeats without sorting.
 */
function walletSelect(db: Database, shape: PageShape, values: Values) {
  const conditions: SQL[] = [sql`${walletAddresses.addressKey} = ${values.addressKey}`];
  if (shape.after) conditions.push(sql`${walletNameC} > ${values.after}`);
  return db
    .selectDistinct({ name: walletNameC })
    .from(walletAddresses)
    .where(and(...conditions))
    .orderBy(walletNameC)
    .limit(values.limit as number);
}

export interface WalletQuery extends NamePageQuery {
  /** The address as matched (walletAddressKey). */
  addressKey: string;
}

function prefixValues(query: PrefixQuery): Values {
  const { prefix, after, namespace, limit } = query;
  return { prefix, upper: prefix + MAX_CHAR, after, namespace, addressKey: undefined, limit };
}

function walletValues(query: WalletQuery): Values {
  const { addressKey, after, limit } = query;
  return { prefix: undefined, upper: undefined, after, namespace: undefined, addressKey, limit };
}

/** The prefix query with its values in place, as the database sees it (tests read its plan). */
export function namesByPrefixQuery(db: Database, query: PrefixQuery) {
  return prefixSelect(
    db,
    { after: query.after !== undefined, namespace: query.namespace !== undefined },
    prefixValues(query),
  );
}

/** The wallet query with its values in place, as the database sees it (tests read its plan). */
export function namesByWalletQuery(db: Database, query: WalletQuery) {
  return walletSelect(db, { after: query.after !== undefined, namespace: false }, walletValues(query));
}

interface Prepared {
  execute(values: Record<string, unknown>): Promise<Array<{ name: string }>>;
}

const PLACEHOLDERS = Object.fromEntries(
  ['prefix', 'upper', 'after', 'namespace', 'addressKey', 'limit'].map((key) => [key, sql.placeholder(key)]),
) as Values;

/**
 * Prepared statements, one per query and shape, built once per database like those of the
 * profile lookup (./queries.ts): pages are asked often, and PostgreSQL then plans each once per
 * connection.
 */
const preparedByDatabase = new WeakMap<Database, Map<string, Prepared>>();

function prepared(db: Database, kind: 'prefix' | 'wallet', shape: PageShape): Prepared {
  let statements = preparedByDatabase.get(db);
  if (statements === undefined) {
    statements = new Map();
    preparedByDatabase.set(db, statements);
  }
  const name = `names_by_${kind}${shape.after ? '_after' : ''}${shape.namespace ? '_in_namespace' : ''}`;
  let statement = statements.get(name);
  if (statement === undefined) {
    const select = kind === 'prefix' ? prefixSelect : walletSelect;
    statement = select(db, shape, PLACEHOLDERS).prepare(name) as Prepared;
    statements.set(name, statement);
  }
  return statement;
}

export async function findNamesByPrefix(db: Database, query: PrefixQuery): Promise<string[]> {
  const shape = { after: query.after !== undefined, namespace: query.namespace !== undefined };
  const rows = await prepared(db, 'prefix', shape).execute(prefixValues(query));
  return rows.map((row) => row.name);
}

export async function findNamesByWallet(db: Database, query: WalletQuery): Promise<string[]> {
  const rows = await prepared(db, 'wallet', { after: query.after !== undefined, namespace: false }).execute(
    walletValues(query),
  );
  return rows.map((row) => row.name);
}
