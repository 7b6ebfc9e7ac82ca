/**
 * The per-request DataLoaders: every lookup of one request (aliases, `profiles`, batch REST
 * calls) goes through them, so a request costs one statement however many profiles it names.
 * They live for one request and cache nothing across requests (the service's profile cache
 * does that, with invalidation). Keys are canonical names: the service validates first.
 *
 * Beneath them one process-wide loader batches the profile lookups of concurrent requests: the
 * requests read in one turn of the event loop share one statement (`= any` of their names),
 * sent once that turn's I/O is handled (setImmediate). Under load that is several names a
 * statement instead of one: fewer statements for PostgreSQL to parse, plan and answer, and fewer
 * socket writes on both sides. It caches nothing; a failed statement fails each request of it.
 * A request's batch of OWN_STATEMENT_FROM_NAMES names or more reads on its own (see there).
 */
import DataLoader from 'dataloader';
import type { DatabaseHandle } from '../db/handle.js';
import { findProfilesByNames, isOwnerOrCreator } from '../db/queries.js';
import { Profile } from '../profiles/profile.js';

/**
 * What the service uses of the database, through this layer: the handle's two reads and its
 * change feed, which raise the database's unavailability as an UnavailableError themselves
 * (src/db/handle.ts).
 */
export type ServiceDatabase = Pick<DatabaseHandle, 'readReplica' | 'readPrimary' | 'writePrimary' | 'listenForChanges'>;

/** One owner-check question: a canonical name ID and an e-mail in comparison form. */
interface OwnershipQuestion {
  name: string;
  emailKey: string;
}

export interface Loaders {
  /** Profiles with their records, by canonical name ID; null where there is none. */
  profileByName: DataLoader<string, Profile | null>;
  /** Whether the e-mail owns the namespace of the name or created it. */
  ownership: DataLoader<OwnershipQuestion, boolean, string>;
}

/** Names one shared statement may carry; a larger turn's worth is split. */
const MAX_NAMES_PER_STATEMENT = 500;

/** The process-wide profile lookups, batched across requests. */
export type SharedProfileLookups = DataLoader<string, Profile | null>;

export function createSharedProfileLookups(database: ServiceDatabase): SharedProfileLookups {
  return new DataLoader((names: readonly string[]) => readProfiles(database, names), {
    cache: false,
    batchScheduleFn: (dispatch) => setImmediate(dispatch),
    maxBatchSize: MAX_NAMES_PER_STATEMENT,
  });
}

/** The profiles of `names` in their order, null where there is none: one statement. */
async function readProfiles(database: ServiceDatabase, names: readonly string[]): Promise<Array<Profile | null>> {
  // A replica may answer (src/db/replicas.ts); owner checks below stay on the primary.
  const rows = await database.readReplica((db) => findProfilesByNames(db, [...new Set(names)]));
  const found = new Map(rows.map((row) => [row.name, new Profile(row)]));
  return names.map((name) => found.get(name) ?? null);
}

/**
 * The profiles of `names` as the primary has them now, in their order (null where there is none):
 * what live updates send after a change read from the change log, which only the primary is sure
 * to have caught up with. No cache, no replica.
 */
export async function readProfilesOnPrimary(
  database: ServiceDatabase,
  names: readonly string[],
): Promise<Array<Profile | null>> {
  const rows = await database.readPrimary((db) => findProfilesByNames(db, [...new Set(names)]));
  const found = new Map(rows.map((row) => [row.name, new Profile(row)]));
  return names.map((name) => found.get(name) ?? null);
}

/**
 * A request's batch of this many names or more reads in a statement of its own. Joining the
 * turn's shared statement saves such a batch little, and costs it the shared loader's promise per
 * name and `loadMany`'s second one (docs/decisions.md, "Large batches in a statement of their own").
 */
const OWN_STATEMENT_FROM_NAMES = 20;

export function createLoaders(database: ServiceDatabase, shared: SharedProfileLookups): Loaders {
  return new RequestLoaders(database, shared);
}

/** A request's loaders; the owner-check one is made when the request first asks (few requests do). */
class RequestLoaders implements Loaders {
  readonly profileByName: DataLoader<string, Profile | null>;
  #ownership: DataLoader<OwnershipQuestion, boolean, string> | undefined;

  constructor(
    private readonly database: ServiceDatabase,
    shared: SharedProfileLookups,
  ) {
    this.profileByName = new DataLoader(
      (names: readonly string[]) =>
        names.length >= OWN_STATEMENT_FROM_NAMES ? readProfiles(database, names) : shared.loadMany(names),
      // Live updates read every changed name they watch at once: statements stay as the shared loader's.
      { maxBatchSize: MAX_NAMES_PER_STATEMENT },
    );
  }

  get ownership(): DataLoader<OwnershipQuestion, boolean, string> {
    this.#ownership ??= new DataLoader(
      // Owner checks are rate-limited to a handful per minute, so one small statement each is fine.
      (questions: readonly OwnershipQuestion[]) =>
        Promise.all(
          questions.map((question) =>
            this.database.readPrimary((db) => isOwnerOrCreator(db, question.name, question.emailKey)),
          ),
        ),
      { cacheKeyFn: (question) => `${question.name}\n${question.emailKey}` },
    );
    return this.#ownership;
  }
}
