/**
 * The per-request DataLoaders. Every lookup of one request (aliases, `profiles`, the REST shim)
 * goes through them, so a request costs one statement per table however many profiles it names.
 * They live for one request only: nothing is cached across requests, so an import is visible at
 * once.
 */
import DataLoader from 'dataloader';
import type { Database, DatabaseGuard } from '../db/database.js';
import { describeDatabaseError, isDatabaseUnavailable } from '../db/errors.js';
import {
  findProfilesByNames,
  findProfilesWithRecordsByNames,
  findRecordsByProfileIds,
  isOwnerOrCreator,
  type ProfileRecord,
  type PublicProfile,
} from '../db/queries.js';
import { canonicalName } from '../names/name-id.js';
import type { Logger } from '../ops/logger.js';
import { serviceUnavailableError } from './errors.js';

/** One owner-check question: a canonical name ID and an e-mail in comparison form. */
export interface OwnershipQuestion {
  name: string;
  emailKey: string;
}

export interface Loaders {
  /** Public profile by name ID; keys are canonicalised, so `Demo@ME` and `demo@me` share one load. */
  profileByName: DataLoader<string, PublicProfile | null, string>;
  /**
   * The same profiles, read together with their records in one statement; it fills
   * `recordsByProfileId` so the records resolvers need no second query. Used when the request
   * selects records (every REST lookup does).
   */
  profileWithRecordsByName: DataLoader<string, PublicProfile | null, string>;
  /** Records of a profile in ascending key order (empty when it has none). */
  recordsByProfileId: DataLoader<number, ProfileRecord[]>;
  /** Whether the e-mail owns the namespace of the name or created it. */
  ownership: DataLoader<OwnershipQuestion, boolean, string>;
}

export function createLoaders(db: Database, logger: Logger, guard: DatabaseGuard = (work) => work()): Loaders {
  const guarded = <K, V>(loader: string, batch: (keys: readonly K[]) => Promise<V[]>) =>
    unavailableAsServiceError(loader, logger, (keys: readonly K[]) => guard(() => batch(keys)));

  const recordsByProfileId = new DataLoader(
    guarded('recordsByProfileId', async (ids: readonly number[]) => {
      const byProfile = new Map<number, ProfileRecord[]>(ids.map((id) => [id, []]));
      for (const record of await findRecordsByProfileIds(db, ids)) byProfile.get(record.profileId)?.push(record);
      return ids.map((id) => byProfile.get(id) ?? []);
    }),
  );

  return {
    profileByName: new DataLoader(
      guarded('profileByName', async (names: readonly string[]) => {
        // DataLoader hands over the keys as first asked, not their cache keys.
        const canonical = names.map(canonicalName);
        const found = new Map((await findProfilesByNames(db, canonical)).map((profile) => [profile.name, profile]));
        return canonical.map((name) => found.get(name) ?? null);
      }),
      { cacheKeyFn: canonicalName },
    ),
    profileWithRecordsByName: new DataLoader(
      guarded('profileWithRecordsByName', async (names: readonly string[]) => {
        const canonical = names.map(canonicalName);
        const found = new Map<string, PublicProfile>();
        for (const { records, ...profile } of await findProfilesWithRecordsByNames(db, canonical)) {
          recordsByProfileId.prime(profile.id, records);
          found.set(profile.name, profile);
        }
        return canonical.map((name) => found.get(name) ?? null);
      }),
      { cacheKeyFn: canonicalName },
    ),
    recordsByProfileId,
    ownership: new DataLoader(
      // Owner checks are rate-limited to a handful per minute, so one small statement each is fine.
      guarded('ownership', async (questions: readonly OwnershipQuestion[]) =>
        Promise.all(questions.map((question) => isOwnerOrCreator(db, question.name, question.emailKey))),
      ),
      { cacheKeyFn: (question) => `${question.name}\n${question.emailKey}` },
    ),
  };
}

/**
 * A batch whose database cannot answer rejects its loads with SERVICE_UNAVAILABLE; any other
 * failure rejects them with the original error, which masking turns into INTERNAL_SERVER_ERROR.
 */
function unavailableAsServiceError<K, V>(
  loader: string,
  logger: Logger,
  batch: (keys: readonly K[]) => Promise<V[]>,
): (keys: readonly K[]) => Promise<V[]> {
  return async (keys) => {
    try {
      return await batch(keys);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      logger.warn({ loader, reason: describeDatabaseError(error) }, 'database unavailable');
      throw serviceUnavailableError();
    }
  };
}
