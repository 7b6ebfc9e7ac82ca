/**
 * The API-key store's reads and its one write, on the primary: a revocation must hold at once,
 * so a key is never read from a replica that has not replayed it yet.
 */
import { type ApiKeyLimits, findActiveApiKey, isApiKeyActive, recordApiKeysUsed } from '../db/api-key-queries.js';
import type { ServiceDatabase } from './loaders.js';

export type { ApiKeyLimits };

export function findApiKey(database: ServiceDatabase, keyHash: string): Promise<ApiKeyLimits | undefined> {
  return database.readPrimary((db) => findActiveApiKey(db, keyHash));
}

export function apiKeyIsActive(database: ServiceDatabase, id: string): Promise<boolean> {
  return database.readPrimary((db) => isApiKeyActive(db, id));
}

/** Writes when keys were last used (batched by the store, not per request). */
export function recordKeysUsed(database: ServiceDatabase, used: ReadonlyMap<string, Date>): Promise<void> {
  return database.writePrimary((db) => recordApiKeysUsed(db, used));
}
