/**
 * The profiles service: the one implementation of every question the API answers. REST handlers
 * and GraphQL resolvers are thin callers of it, so both surfaces share the validation and
 * canonicalisation, the rate-limit budgets, the cache, the loaders, the queries and the error
 * model (./errors.ts), and cannot drift apart.
 *
 * Every call draws on its budget first (valid or not, as the contract counts requests), then
 * validates, then answers from the profile cache or the request's loaders. An outcome carries
 * the budget decision, which REST turns into RateLimit-* headers.
 */
import type { EdgeCaching } from '../edge/edge-caching.js';
import { profileTag } from '../edge/tags.js';
import type { RateLimitDecision, RateLimiter, RateLimits } from '../limits/rate-limit.js';
import { createLoaders, createSharedProfileLookups, type Loaders, type ServiceDatabase } from '../loaders/loaders.js';
import type { Logger } from '../logging/logger.js';
import { emailKey, INVALID_EMAIL_MESSAGE, isValidEmail } from '../names/email.js';
import { canonicalName, INVALID_NAME_MESSAGE, parseNameId } from '../names/name-id.js';
import type { Profile } from '../profiles/profile.js';
import { type ChangesService, createChanges } from './changes.js';
import { createDiscovery, type DiscoveryService } from './discovery.js';
import { describeFailure, InvalidInputError, RateLimitedError, UnavailableError } from './errors.js';
import { canonicalNames, checkListLength } from './name-lists.js';
import type { ProfileCache } from './profile-cache.js';
import type { Outcome, ServiceRequest } from './request.js';

export const MISSING_PARAMETERS_MESSAGE = 'Both email and name parameters are required';
/** Bounds the work of one call; a client with more names sends several. */
export { MAX_NAMES_PER_REQUEST, TOO_MANY_NAMES_MESSAGE } from './name-lists.js';

interface OwnerCheckInput {
  email?: string | null | undefined;
  name?: string | null | undefined;
}

export interface OwnerCheckResult {
  hasCreated: boolean;
  /** The e-mail as given, trimmed. */
  email: string;
  /** The name ID as given, trimmed. */
  name: string;
}

export interface ProfilesService extends DiscoveryService, ChangesService {
  /**
   * The profile of a name ID (any case, NFC or not), or null. One point of the profile budget.
   * `checkInput` validates a caller's other input (an avatar size, a WebFinger resource) after the
   * budget is drawn, so invalid requests count too, and before the name; it throws
   * InvalidInputError carrying the decision it is given.
   */
  lookupProfile(
    request: ServiceRequest,
    name: string,
    checkInput?: (rateLimit: RateLimitDecision | undefined) => void,
  ): Promise<Outcome<Profile | null>>;
  /**
   * Up to MAX_NAMES_PER_REQUEST profiles, in the order asked, null where a name has none. One
   * point of the profile budget per distinct name; any invalid name fails the whole call.
   */
  lookupProfiles(request: ServiceRequest, names: readonly string[]): Promise<Outcome<Array<Profile | null>>>;
  /** Whether an e-mail owns the namespace of a name or created it. One point of the owner-check budget. */
  checkOwner(request: ServiceRequest, input: OwnerCheckInput): Promise<Outcome<OwnerCheckResult>>;
}

export interface ProfilesServiceDeps {
  database: ServiceDatabase;
  limits: RateLimits;
  cache: ProfileCache;
  logger: Logger;
  /** Records what each answer read, for shared caches; absent: nothing is recorded. */
  edge?: EdgeCaching;
}

/**
 * The most names a call may ask for and still fill the profile cache with what it loaded. A call
 * of a few names is the hot set the cache is for (one profile, a page of a handful); one of tens
 * or hundreds (`profiles(names:)`, the REST batch, live updates' reads after an import) is a
 * scan: filling from it would push the hot names out, up to a hundred per request, and every
 * profile it kept would outlive the young generation only to die in the old one. Such calls
 * still answer from the cache what it holds (docs/decisions.md, "Batches read the profile cache
 * but do not fill it").
 */
export const CACHE_FILL_MAX_NAMES = 10;

export function createProfilesService({ database, limits, cache, logger, edge }: ProfilesServiceDeps): ProfilesService {
  const sharedLookups = createSharedProfileLookups(database);
  const loadersOf = (request: ServiceRequest): Loaders => {
    request.loaders ??= createLoaders(database, sharedLookups);
    return request.loaders;
  };

  /**
   * A read of the database for a call that drew `rateLimit`: the database's unavailability
   * (raised by the handle) is logged once per request and carries the call's budget decision.
   */
  const read = async <T>(request: ServiceRequest, rateLimit: RateLimitDecision | undefined, work: () => Promise<T>) => {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof UnavailableError)) throw error;
      if (!request.unavailableLogged) {
        request.unavailableLogged = true;
        logger.warn({ requestId: request.requestId, reason: describeFailure(error) }, 'database unavailable');
      }
      throw error.withRateLimit(rateLimit);
    }
  };

  /** Notes, before reading, what the answer will show (src/edge/edge-caching.ts). */
  const dependsOn = (request: ServiceRequest, tags: Iterable<string>, shareable = true): void => {
    const reads = edge?.begin(request.edge);
    if (reads === undefined) return;
    request.edge = reads;
    for (const tag of tags) reads.tags.add(tag);
    if (!shareable) reads.shareable = false;
  };

  const loadProfiles = async (
    request: ServiceRequest,
    names: readonly string[],
    rateLimit: RateLimitDecision | undefined,
  ): Promise<Array<Profile | null>> => {
    if (edge?.purging === true) dependsOn(request, names.map(profileTag));
    const answers = names.map((name) => cache.get(name));
    const missing = names.filter((_, index) => answers[index] === undefined);
    if (missing.length === 0) return answers as Array<Profile | null>;
    const ticket = cache.ticket();
    // One failure fails the call once, rather than once per name as loadMany would report it.
    const loaded = await read(request, rateLimit, () =>
      Promise.all(missing.map((name) => loadersOf(request).profileByName.load(name))),
    );
    if (names.length <= CACHE_FILL_MAX_NAMES) {
      missing.forEach((name, index) => {
        cache.fill(name, loaded[index] ?? null, ticket);
      });
    }
    // `loaded` follows `missing`, which is `names` without the ones the cache answered.
    let next = 0;
    return answers.map((answer) => (answer === undefined ? (loaded[next++] ?? null) : answer));
  };

  /** One name, as loadProfiles reads it (the common lookup), without a list at each step. */
  const loadProfile = async (
    request: ServiceRequest,
    name: string,
    rateLimit: RateLimitDecision | undefined,
  ): Promise<Profile | null> => {
    if (edge?.purging === true) dependsOn(request, [profileTag(name)]);
    const cached = cache.get(name);
    if (cached !== undefined) return cached;
    const ticket = cache.ticket();
    const loaded = await read(request, rateLimit, () => loadersOf(request).profileByName.load(name));
    cache.fill(name, loaded, ticket);
    return loaded;
  };

  return {
    ...createDiscovery({ database, limits, spend, read, loadProfiles, dependsOn }),
    ...createChanges({ database, limits, spend, read, loadProfiles }),

    async lookupProfile(request, rawName, checkInput) {
      const rateLimit = await spend(limits.profile, request, 1);
      checkInput?.(rateLimit);
      const name = parseNameId(rawName);
      if (name === null) throw new InvalidInputError(INVALID_NAME_MESSAGE, rateLimit);
      return { value: await loadProfile(request, name.name, rateLimit), rateLimit };
    },

    async lookupProfiles(request, rawNames) {
      if (rawNames.length === 0) return { value: [], rateLimit: undefined };
      const { names, rateLimit } = await checkNameList(limits.profile, request, rawNames);
      return { value: await loadProfiles(request, names, rateLimit), rateLimit };
    },

    async checkOwner(request, input) {
      const rateLimit = await spend(limits.ownerCheck, request, 1);
      const email = input.email?.trim() ?? '';
      const name = input.name?.trim() ?? '';
      if (email === '' || name === '') throw new InvalidInputError(MISSING_PARAMETERS_MESSAGE, rateLimit);
      if (!isValidEmail(email)) throw new InvalidInputError(INVALID_EMAIL_MESSAGE, rateLimit);
      const nameId = parseNameId(name);
      if (nameId === null) throw new InvalidInputError(INVALID_NAME_MESSAGE, rateLimit);
      const question = { name: nameId.name, emailKey: emailKey(email) };
      const hasCreated = await read(request, rateLimit, () => loadersOf(request).ownership.load(question));
      return { value: { hasCreated, email, name }, rateLimit };
    },
  };
}

/** A list of names checked as `profiles(names:)` and live-update subscriptions check it. */
export interface CheckedNameList {
  /** The canonical name of each raw name, in the order given (duplicates kept). */
  names: string[];
  rateLimit: RateLimitDecision | undefined;
}

/**
 * The rules of a list of names, shared by batch lookups and live-update subscriptions: at most
 * MAX_NAMES_PER_REQUEST (refused before the budget is drawn), one point of the budget per
 * distinct name, and any invalid name fails the whole list, naming the first and the indexes of
 * all (`invalidIndexes`). An empty list is the caller's to answer (a lookup of nothing is empty,
 * a subscription to nothing is refused).
 */
export async function checkNameList(
  limiter: RateLimiter | null,
  request: ServiceRequest,
  rawNames: readonly string[],
): Promise<CheckedNameList> {
  checkListLength(rawNames, undefined);
  const parsed = rawNames.map((name) => parseNameId(name));
  // Invalid names count too (the list is refused after the budget is drawn, as for one name).
  const distinct = new Set(rawNames.map((name, index) => parsed[index]?.name ?? canonicalName(name))).size;
  const rateLimit = await spend(limiter, request, distinct);
  return { names: canonicalNames(rawNames, parsed, rateLimit), rateLimit };
}

/**
 * Takes `points` from the client's budget (an API key's own limit when the request has one);
 * throws RateLimitedError when it is spent.
 */
export async function spend(
  limiter: RateLimiter | null,
  request: ServiceRequest,
  points: number,
): Promise<RateLimitDecision | undefined> {
  if (limiter === null) return undefined; // this budget is switched off
  const decision = await limiter.consume(request.clientKey, points, request.apiKey?.limits[limiter.budget]);
  if (!decision.allowed) throw new RateLimitedError(decision);
  return decision;
}
