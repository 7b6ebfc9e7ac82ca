/**
 * The discovery reads (src/service/discovery.ts): pages of names by prefix or by wallet address,
 * which a replica may answer, and a name's existing look-alikes, read on the primary. Each is one
 * statement with a bound; nothing here batches or caches, as a listing is asked for once.
 */
import { findNamesByPrefix, findNamesByWallet, type PrefixQuery, type WalletQuery } from '../db/discovery-queries.js';
import { findLookAlikes, type LookAlikeQuery } from '../db/look-alike-queries.js';
import type { ServiceDatabase } from './loaders.js';

export function readNamesByPrefix(database: ServiceDatabase, query: PrefixQuery): Promise<string[]> {
  return database.readReplica((db) => findNamesByPrefix(db, query));
}

export function readNamesByWallet(database: ServiceDatabase, query: WalletQuery): Promise<string[]> {
  return database.readReplica((db) => findNamesByWallet(db, query));
}

export function readLookAlikes(database: ServiceDatabase, query: LookAlikeQuery): Promise<string[]> {
  return database.readPrimary((db) => findLookAlikes(db, query));
}
