/**
 * The discovery reads (src/service/discovery.ts): pages of names by prefix or by wallet address,
 * which a replica may answer, and a name's existing look-alikes, read on the primary. Each is one
 * statement with a bound; nothing here batches or caches, as a listing is asked for once.
 */
import { findNamesByPrefix, findNamesByWallet, type PrefixQuery, type WalletQuery } from '../db/discovery-queries.js';
import { findLookAlikes, type LookAlikeQuery } from '../db/look-alike-queries.js';
import type { DatabaseReads } from './loaders.js';

export function readNamesByPrefix(database: DatabaseReads, query: PrefixQuery): Promise<string[]> {
  return database.readReplica((db) => findNamesByPrefix(db, query));
}

export function readNamesByWallet(database: DatabaseReads, query: WalletQuery): Promise<string[]> {
  return database.readReplica((db) => findNamesByWallet(db, query));
}

export function readLookAlikes(database: DatabaseReads, query: LookAlikeQuery): Promise<string[]> {
  return database.readPrimary((db) => findLookAlikes(db, query));
}
