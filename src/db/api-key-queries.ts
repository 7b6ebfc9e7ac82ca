/**
 * The statements on `api_keys`: the servers look keys up by hash and note when they were last
 * used; `npm run keys` creates, lists, updates and revokes them. Creation, updates and
 * revocation announce themselves in their transaction (notifyApiKeyChange), so every server
 * drops the keys it holds when they commit.
 */
import { notifyApiKeyChange } from './change-notifications.js';
import { and, asc, eq, isNull, sql } from './drizzle.js';
import { textArrayLiteral } from './postgres-deadlines.js';
import { type ApiKeyRow, apiKeys, type Database } from './schema.js';

/** What a server needs of a valid key: no hash, no name. */
export interface ApiKeyLimits {
  id: string;
  keyHash: string;
  /** Null: the configured default. */
  profileLimit: number | null;
  ownerCheckLimit: number | null;
  documentsOnly: boolean;
}

/** The key with this hash, unless it is unknown or revoked. */
export async function findActiveApiKey(db: Database, keyHash: string): Promise<ApiKeyLimits | undefined> {
  const [row] = await db
    .select({
      id: apiKeys.id,
      keyHash: apiKeys.keyHash,
      profileLimit: apiKeys.profileLimit,
      ownerCheckLimit: apiKeys.ownerCheckLimit,
      documentsOnly: apiKeys.documentsOnly,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  return row;
}

/** Whether the key with this id exists and is not revoked. */
export async function isApiKeyActive(db: Database, id: string): Promise<boolean> {
  const [row] = await db
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)));
  return row !== undefined;
}

export interface NewApiKey {
  id: string;
  name: string;
  keyHash: string;
  profileLimit: number | null;
  ownerCheckLimit: number | null;
  /** Unset: false. */
  documentsOnly?: boolean;
}

export async function insertApiKey(db: Database, key: NewApiKey): Promise<ApiKeyRow> {
  return db.transaction(async (tx) => {
    const [row] = await tx.insert(apiKeys).values(key).returning();
    // A server may have cached the hash as unknown (someone tried it early); it must look again.
    await notifyApiKeyChange(tx, key.id);
    if (row === undefined) throw new Error(`the API key ${key.id} was not stored`);
    return row;
  });
}

/** Every key, oldest first. */
export function listApiKeys(db: Database): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
}

export type RevokeResult = 'revoked' | 'already revoked' | 'unknown';

export async function revokeApiKey(db: Database, id: string): Promise<RevokeResult> {
  return db.transaction(async (tx) => {
    const revoked = await tx
      .update(apiKeys)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id });
    if (revoked.length > 0) {
      await notifyApiKeyChange(tx, id);
      return 'revoked';
    }
    const [existing] = await tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, id));
    return existing === undefined ? 'unknown' : 'already revoked';
  });
}

export type UpdateResult = 'updated' | 'revoked' | 'unknown';

/**
 * Sets whether key `id` may run only persisted documents, announced like a revocation: every
 * server drops the keys it holds when the change commits. A revoked key is left as it is.
 */
export async function setApiKeyDocumentsOnly(db: Database, id: string, documentsOnly: boolean): Promise<UpdateResult> {
  return db.transaction(async (tx) => {
    const updated = await tx
      .update(apiKeys)
      .set({ documentsOnly })
      .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id });
    if (updated.length > 0) {
      await notifyApiKeyChange(tx, id);
      return 'updated';
    }
    const [existing] = await tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, id));
    return existing === undefined ? 'unknown' : 'revoked';
  });
}

/**
 * Notes when keys were last used: one statement for a batch of keys, each time only moved
 * forward (several servers write the same keys).
 */
export async function recordApiKeysUsed(db: Database, used: ReadonlyMap<string, Date>): Promise<void> {
  if (used.size === 0) return;
  // As array literals (text parameters): both drivers send them alike.
  const ids = textArrayLiteral([...used.keys()]);
  const times = textArrayLiteral([...used.values()].map((time) => time.toISOString()));
  await db.execute(sql`
    update ${apiKeys} set last_used_at = used.at
    from unnest(${ids}::text[], ${times}::timestamptz[]) as used(id, at)
    where ${apiKeys.id} = used.id and (${apiKeys.lastUsedAt} is null or ${apiKeys.lastUsedAt} < used.at)`);
}
