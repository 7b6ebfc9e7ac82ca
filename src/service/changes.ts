/**
 * The change feed, part of the profiles service: pages of the change log (src/db/change-log.ts)
 * after a cursor, filtered by names or a namespace. REST `GET /api/changes` and GraphQL `changes`
 * call these functions and nothing else.
 *
 * A cursor is an opaque string naming a position of the log (./change-cursors.ts). A page starts
 * after its `after` cursor and ends at `next`, which is past every entry the page looked at,
 * matching a filter or not, so a consumer that follows `next` sees every entry of its filter once
 * and never waits on entries it does not want. Without `after` a page starts at the oldest entry
 * kept; `after=now` answers no changes and `next` at the current end (a consumer starts there).
 *
 * Budget: one point of the profile budget per page. A page's profiles (GraphQL `Change.profile`)
 * cost one point per distinct name, as `profiles(names:)` does.
 */
import type { RateLimitDecision, RateLimiter, RateLimits } from '../limits/rate-limit.js';
import {
  type ChangeKind,
  comparePositions,
  type LogPage,
  type LogPosition,
  readChangeLogEnd,
  readChangeLogPage,
  readChangeLogPruned,
  START_OF_LOG,
} from '../loaders/change-log.js';
import type { ServiceDatabase } from '../loaders/loaders.js';
import { parseNamespace } from '../names/name-id.js';
import type { Profile } from '../profiles/profile.js';
import { CURRENT_END, decodeChangeCursor, encodeChangeCursor } from './change-cursors.js';

export { CURRENT_END as CURRENT_END_CURSOR } from './change-cursors.js';

import { CursorExpiredError, InvalidInputError } from './errors.js';
import { parseNameList } from './name-lists.js';
import type { Outcome, ServiceRequest } from './request.js';

export const DEFAULT_CHANGES_PAGE = 100;
export const MAX_CHANGES_PAGE = 1000;
export const INVALID_CHANGE_CURSOR_MESSAGE = 'Invalid cursor';
const INVALID_CHANGES_PAGE_MESSAGE = `Invalid page size (limit, first), expected an integer from 1 to ${MAX_CHANGES_PAGE}`;
export const INVALID_FEED_NAMESPACE_MESSAGE =
  'Invalid namespace, expected 1 to 63 letters, digits, ".", "_" or "-", starting and ending with a letter or digit';
const NAMES_AND_NAMESPACE_MESSAGE = 'Give names or a namespace, not both';
/**
 * The most entries a page filtered by namespace looks at: a namespace that changed little must
 * not cost a scan of everything after the cursor. Its `next` moves past what it looked at.
 */
export const NAMESPACE_SCAN = 10_000;

interface ChangesInput {
  /** A cursor from an earlier page or event, `now`, or null / undefined for the oldest entry. */
  after?: string | null;
  /** Page size, 1 to MAX_CHANGES_PAGE; null or undefined for DEFAULT_CHANGES_PAGE. */
  first?: number | null;
  /** Only these names (as given; 1 to 100, validated like a batch lookup). */
  names?: readonly string[] | null;
  /** Only this namespace. */
  namespace?: string | null;
}

export interface Change {
  cursor: string;
  /** Canonical name ID. */
  name: string;
  kind: ChangeKind;
  /** When the change was committed. */
  at: Date;
}

export interface ChangePage {
  changes: Change[];
  /** The cursor to ask with next: past every entry this page looked at. */
  next: string;
  /** Whether more entries were already there after `next`. */
  hasMore: boolean;
}

export interface ChangesService {
  /** A page of the change log; one point of the profile budget. */
  changes(request: ServiceRequest, input: ChangesInput): Promise<Outcome<ChangePage>>;
  /**
   * The profiles, as they are now, of a page this service returned (null where one no longer
   * exists), by name: one point of the profile budget per distinct name, drawn once per page.
   */
  profilesOfChanges(request: ServiceRequest, page: ChangePage): Promise<ReadonlyMap<string, Profile | null>>;
}

export interface ChangesDeps {
  database: ServiceDatabase;
  limits: RateLimits;
  spend(limiter: RateLimiter | null, request: ServiceRequest, points: number): Promise<RateLimitDecision | undefined>;
  read<T>(request: ServiceRequest, rateLimit: RateLimitDecision | undefined, work: () => Promise<T>): Promise<T>;
  loadProfiles(
    request: ServiceRequest,
    names: readonly string[],
    rateLimit: RateLimitDecision | undefined,
  ): Promise<Array<Profile | null>>;
}

/** Where a page starts: a position, or the current end (`now`). */
type Start = LogPosition | typeof CURRENT_END | undefined;

export function createChanges(deps: ChangesDeps): ChangesService {
  const { database, limits, spend, read, loadProfiles } = deps;
  const profilesOfPage = new WeakMap<ChangePage, Promise<ReadonlyMap<string, Profile | null>>>();
  const issued = new WeakSet<ChangePage>();

  const parseStart = (after: string | null | undefined, rateLimit: RateLimitDecision | undefined): Start => {
    if (after === undefined || after === null) return undefined;
    const start = decodeChangeCursor(after);
    if (start === undefined) throw new InvalidInputError(INVALID_CHANGE_CURSOR_MESSAGE, rateLimit);
    return start;
  };

  /**
   * The page, then how far the log was pruned: entries pruned after the page was read are no loss
   * to it, and the pruner moves its position before it removes anything (src/db/change-log.ts).
   * Without a cursor the page starts where pruning stopped, the oldest entry kept.
   */
  const readPage = async (
    start: Start,
    size: number,
    filter: { names?: readonly string[]; namespace?: string },
  ): Promise<{ page: LogPage; pruned: LogPosition }> => {
    if (start === CURRENT_END) {
      return { page: { entries: [], next: await readChangeLogEnd(database), hasMore: false }, pruned: START_OF_LOG };
    }
    const after = start ?? (await readChangeLogPruned(database));
    const page = await readChangeLogPage(database, { after, limit: size, scan: NAMESPACE_SCAN, ...filter });
    return { page, pruned: await readChangeLogPruned(database) };
  };

  return {
    async changes(request, input) {
      const rateLimit = await spend(limits.profile, request, 1);
      const first = input.first ?? DEFAULT_CHANGES_PAGE;
      if (!Number.isInteger(first) || first < 1 || first > MAX_CHANGES_PAGE) {
        throw new InvalidInputError(INVALID_CHANGES_PAGE_MESSAGE, rateLimit);
      }
      const start = parseStart(input.after, rateLimit);
      const hasNames = input.names !== undefined && input.names !== null;
      const hasNamespace = input.namespace !== undefined && input.namespace !== null;
      if (hasNames && hasNamespace) throw new InvalidInputError(NAMES_AND_NAMESPACE_MESSAGE, rateLimit);
      const names = hasNames ? [...new Set(parseNameList(input.names ?? [], rateLimit))] : undefined;
      let namespace: string | undefined;
      if (hasNamespace) {
        namespace = parseNamespace(input.namespace ?? '') ?? undefined;
        if (namespace === undefined) throw new InvalidInputError(INVALID_FEED_NAMESPACE_MESSAGE, rateLimit);
      }
      const { page, pruned } = await read(request, rateLimit, () => readPage(start, first, { names, namespace }));
      if (typeof start === 'object' && comparePositions(start, pruned) < 0) throw new CursorExpiredError(rateLimit);
      const changes = page.entries.map((entry) => ({
        cursor: encodeChangeCursor(entry),
        name: entry.name,
        kind: entry.kind,
        at: entry.committedAt,
      }));
      const value: ChangePage = { changes, next: encodeChangeCursor(page.next), hasMore: page.hasMore };
      issued.add(value);
      return { value, rateLimit };
    },

    profilesOfChanges(request, page) {
      if (!issued.has(page)) throw new Error('profilesOfChanges takes a page that this service returned');
      let profiles = profilesOfPage.get(page);
      if (profiles === undefined) {
        profiles = (async () => {
          const names = [...new Set(page.changes.map((change) => change.name))];
          const rateLimit = names.length === 0 ? undefined : await spend(limits.profile, request, names.length);
          const loaded = await loadProfiles(request, names, rateLimit);
          return new Map(names.map((name, index) => [name, loaded[index] ?? null]));
        })();
        profilesOfPage.set(page, profiles);
      }
      return profiles;
    },
  };
}
