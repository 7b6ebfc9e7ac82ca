/**
 * Discovery, part of the profiles service: prefix search over names, the reverse lookup of names
 * by wallet address, and the name check. REST and GraphQL call these functions and nothing else,
 * so both surfaces validate, page, charge and fail alike.
 *
 * Budgets: a listing costs one point of the profile budget per name it returns, at least one, so
 * that paging through listings copies the data no faster than looking names up one by one. The
 * first point is drawn before anything else (as for every call); a page is cut to the points that
 * are left, and the rest is drawn once the page is known. The name check costs one point, and
 * reads the existing look-alikes of a name from their index (src/loaders/listings.ts).
 */
import { NAME_CHECK_TAG, searchTags, WALLETS_TAG } from '../edge/tags.js';
import type { RateLimitDecision, RateLimiter, RateLimits } from '../limits/rate-limit.js';
import { readLookAlikes, readNamesByPrefix, readNamesByWallet } from '../loaders/listings.js';
import type { ServiceDatabase } from '../loaders/loaders.js';
import { checkName, isUnicodeText, lookAlikesWarning, type NameCheckResult } from '../names/name-check.js';
import { canonicalName, codePointLength, type NameId, parseNameId, parseNamespace } from '../names/name-id.js';
import { skeleton } from '../names/skeleton.js';
import type { Profile } from '../profiles/profile.js';
import { walletAddressKey } from '../profiles/wallets.js';
import { cursorsFor, decodeCursor, INVALID_CURSOR_MESSAGE } from './cursors.js';
import { InvalidInputError } from './errors.js';
import type { Outcome, ServiceRequest } from './request.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
const MAX_PREFIX_LENGTH = 63;
/** The most existing look-alikes a name check lists. */
export const MAX_LOOK_ALIKES = 10;
/** The longest address the reverse lookup answers (and indexes: see drizzle/0001_discovery.sql). */
export const MAX_ADDRESS_LENGTH = 256;

export const INVALID_PAGE_SIZE_MESSAGE = `Invalid page size (limit, first), expected an integer from 1 to ${MAX_PAGE_SIZE}`;
export const MISSING_PREFIX_MESSAGE = 'The prefix parameter is required';
export const INVALID_PREFIX_MESSAGE =
  'Invalid prefix, expected 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit';
export const INVALID_NAMESPACE_MESSAGE =
  'Invalid namespace, expected 1 to 63 letters, digits, ".", "_" or "-", starting and ending with a letter or digit';
export const INVALID_ADDRESS_MESSAGE = `Invalid address, expected 1 to ${MAX_ADDRESS_LENGTH} characters without control characters`;

interface PageInput {
  /** Page size, 1 to MAX_PAGE_SIZE; null or undefined for DEFAULT_PAGE_SIZE. */
  first?: number | null;
  /** A cursor of an earlier page of the same query; null or undefined for the first page. */
  after?: string | null;
}

interface SearchInput extends PageInput {
  prefix?: string | null;
  /** One namespace, or null or undefined for all. */
  namespace?: string | null;
}

interface WalletInput extends PageInput {
  address?: string | null;
}

/** A page of names in code-point order. */
export interface NamePage {
  names: readonly string[];
  /** The cursor after each name (Relay's edge cursors). */
  cursors: readonly string[];
  hasNextPage: boolean;
  /** The cursor of the next page; null when this is the last one. */
  nextCursor: string | null;
}

export interface NameCheck extends NameCheckResult {
  /** Whether a profile has this name (false for an invalid one). */
  exists: boolean;
  /**
   * Existing names, other than this one, in its namespace whose local part has the same UTS #39
   * skeleton: at most MAX_LOOK_ALIKES, canonical, in code-point order; empty for an invalid name.
   */
  confusableWith: string[];
}

export interface DiscoveryService {
  /**
   * Names whose local part starts with a prefix (canonicalised like a name part), in one
   * namespace or all, in code-point order of the canonical name. One point of the profile
   * budget per name returned, at least one.
   */
  searchProfiles(request: ServiceRequest, input: SearchInput): Promise<Outcome<NamePage>>;
  /**
   * Names of the profiles whose `crypto` records list an address (`0x` addresses without regard
   * to case), in code-point order. Claims of the profiles, not verified ownership. Budget as for
   * searchProfiles.
   */
  profilesByWallet(request: ServiceRequest, input: WalletInput): Promise<Outcome<NamePage>>;
  /**
   * Canonical form, validity with the reason, existence, look-alike warnings and the existing
   * names it looks like. One point.
   */
  checkName(request: ServiceRequest, name: string): Promise<Outcome<NameCheck>>;
  /**
   * The profiles of a page this service returned (paid for by the listing, so free here), in
   * its order; null where a profile has gone since the page was read.
   */
  profilesOfPage(request: ServiceRequest, page: NamePage): Promise<Array<Profile | null>>;
}

/** What discovery borrows from the profiles service, so that it reads, loads and charges the same way. */
export interface DiscoveryDeps {
  database: ServiceDatabase;
  limits: RateLimits;
  spend(limiter: RateLimiter | null, request: ServiceRequest, points: number): Promise<RateLimitDecision | undefined>;
  read<T>(request: ServiceRequest, rateLimit: RateLimitDecision | undefined, work: () => Promise<T>): Promise<T>;
  loadProfiles(
    request: ServiceRequest,
    names: readonly string[],
    rateLimit: RateLimitDecision | undefined,
  ): Promise<Array<Profile | null>>;
  /** Notes, before reading, the cache tags of what the answer shows (src/edge/tags.ts). */
  dependsOn(request: ServiceRequest, tags: Iterable<string>, shareable?: boolean): void;
}

const PREFIX_CHARACTERS = /^[\p{L}\p{Nd}][\p{L}\p{Nd}._-]*$/u;
const CONTROL_CHARACTER = /\p{Cc}/u;

/** Reads one page: `limit` rows at most, after the position `after`. */
type PageReader = (after: string | undefined, limit: number) => Promise<string[]>;

interface Listing {
  /** Identifies the query in its cursors. */
  scope: string;
  /** The cache tags of its pages (src/edge/tags.ts). */
  tags: readonly string[];
  /** Whether a name can be on this listing: a cursor naming anything else is not one of its cursors. */
  admits(name: string): boolean;
  read: PageReader;
}

export function createDiscovery(deps: DiscoveryDeps): DiscoveryService {
  const { database, limits, spend, read, loadProfiles, dependsOn } = deps;
  const issuedPages = new WeakSet<NamePage>();

  /** Validates the page input and reads the page, charging one point per name (see the module comment). */
  const listPage = async (
    request: ServiceRequest,
    rateLimit: RateLimitDecision | undefined,
    input: PageInput,
    listing: Listing,
  ): Promise<Outcome<NamePage>> => {
    const first = input.first ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE) {
      throw new InvalidInputError(INVALID_PAGE_SIZE_MESSAGE, rateLimit);
    }
    let after: string | undefined;
    if (input.after !== undefined && input.after !== null) {
      const name = decodeCursor(listing.scope, input.after);
      if (name === null || !listing.admits(name)) throw new InvalidInputError(INVALID_CURSOR_MESSAGE, rateLimit);
      after = name;
    }
    // The first point is paid; a page holds no more names than the points left (plus that one).
    const size = rateLimit === undefined ? first : Math.min(first, rateLimit.remaining + 1);
    // A page cut to this client's budget is not the page another client would get.
    dependsOn(request, listing.tags, size === first);
    const rows = await read(request, rateLimit, () => listing.read(after, size + 1));
    const names = rows.slice(0, size);
    const charged = names.length > 1 ? await spend(limits.profile, request, names.length - 1) : rateLimit;
    const cursors = cursorsFor(listing.scope, names);
    const hasNextPage = rows.length > size;
    const page: NamePage = { names, cursors, hasNextPage, nextCursor: hasNextPage ? (cursors.at(-1) ?? null) : null };
    issuedPages.add(page);
    return { value: page, rateLimit: charged };
  };

  /** The existing names that look like a valid one (see NameCheck.confusableWith). */
  const existingLookAlikes = (request: ServiceRequest, rateLimit: RateLimitDecision | undefined, name: NameId) =>
    read(request, rateLimit, () =>
      readLookAlikes(database, {
        namespace: name.domain,
        skeleton: skeleton(name.local),
        name: name.name,
        limit: MAX_LOOK_ALIKES,
      }),
    );

  return {
    async searchProfiles(request, input) {
      const rateLimit = await spend(limits.profile, request, 1);
      if (input.prefix === undefined || input.prefix === null)
        throw new InvalidInputError(MISSING_PREFIX_MESSAGE, rateLimit);
      const prefix = parsePrefix(input.prefix);
      if (prefix === null) throw new InvalidInputError(INVALID_PREFIX_MESSAGE, rateLimit);
      let namespace: string | undefined;
      if (input.namespace !== undefined && input.namespace !== null) {
        namespace = parseNamespace(input.namespace) ?? undefined;
        if (namespace === undefined) throw new InvalidInputError(INVALID_NAMESPACE_MESSAGE, rateLimit);
      }
      return listPage(request, rateLimit, input, {
        scope: `search\n${prefix}\n${namespace ?? ''}`,
        tags: searchTags(namespace),
        admits: (name) => {
          const parsed = parseNameId(name);
          return (
            parsed?.name === name &&
            parsed.local.startsWith(prefix) &&
            (namespace === undefined || parsed.domain === namespace)
          );
        },
        read: (after, limit) => readNamesByPrefix(database, { prefix, namespace, after, limit }),
      });
    },

    async profilesByWallet(request, input) {
      const rateLimit = await spend(limits.profile, request, 1);
      const address = input.address ?? '';
      if (!isValidAddress(address)) throw new InvalidInputError(INVALID_ADDRESS_MESSAGE, rateLimit);
      const addressKey = walletAddressKey(address);
      return listPage(request, rateLimit, input, {
        scope: `wallet\n${addressKey}`,
        tags: [WALLETS_TAG],
        admits: (name) => parseNameId(name)?.name === name,
        read: (after, limit) => readNamesByWallet(database, { addressKey, after, limit }),
      });
    },

    async checkName(request, name) {
      const rateLimit = await spend(limits.profile, request, 1);
      const result = checkName(name);
      const parsed = result.valid ? parseNameId(name) : null;
      if (parsed === null) return { value: { ...result, exists: false, confusableWith: [] }, rateLimit };
      dependsOn(request, [NAME_CHECK_TAG]);
      const [[profile = null], confusableWith] = await Promise.all([
        loadProfiles(request, [parsed.name], rateLimit),
        existingLookAlikes(request, rateLimit, parsed),
      ]);
      const warning = lookAlikesWarning(confusableWith);
      const warnings = warning === null ? result.warnings : [...result.warnings, warning];
      return { value: { ...result, warnings, exists: profile !== null, confusableWith }, rateLimit };
    },

    async profilesOfPage(request, page) {
      // Free because the listing paid for exactly these names: only its own pages qualify.
      if (!issuedPages.has(page)) throw new Error('profilesOfPage takes a page that this service returned');
      return loadProfiles(request, page.names, undefined);
    },
  };
}

/** The canonical form of a search prefix, or null when it cannot start a name's local part. */
function parsePrefix(input: string): string | null {
  if (!isUnicodeText(input)) return null;
  const prefix = canonicalName(input);
  const length = codePointLength(prefix);
  return length >= 1 && length <= MAX_PREFIX_LENGTH && PREFIX_CHARACTERS.test(prefix) ? prefix : null;
}

/** An address the reverse lookup can look for: Unicode text the database can hold, of a sane length. */
function isValidAddress(address: string): boolean {
  const length = codePointLength(address);
  return length >= 1 && length <= MAX_ADDRESS_LENGTH && isUnicodeText(address) && !CONTROL_CHARACTER.test(address);
}
