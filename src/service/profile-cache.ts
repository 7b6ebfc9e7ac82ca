/**
 * Hot profiles from memory, never stale: a bounded LRU cache of loaded profiles (ready answers:
 * a Profile keeps its REST document and ETag once built) and of names without a profile,
 * keyed by canonical name.
 *
 * Freshness comes from the database's change feed (src/db/change-feed.ts). The cache answers
 * only while the feed is live, evicts the names a change notification lists, empties itself
 * when the feed says everything changed or when it loses or regains the feed (changes in
 * between were not heard). A load that started before an eviction does not fill the cache with
 * what it read: every eviction starts a new epoch, and a fill from an older epoch is dropped.
 *
 * A profile is kept from its second lookup within a recent window, not its first
 * (./cache-admission.ts): lookups spread over many names then pass by without replacing hot
 * entries, and without the garbage of entries that would be evicted before anyone asked again.
 */
import { LRUCache } from 'lru-cache';
import type { Profile } from '../profiles/profile.js';
import { type Admission, CacheAdmission } from './cache-admission.js';

/** Stands for "no profile has this name" (the cache cannot hold null). */
const NOT_FOUND = Symbol('not found');

type Entry = Profile | typeof NOT_FOUND;

export interface ProfileCacheStats {
  hits: number;
  misses: number;
  entries: number;
  maxEntries: number;
  /** Whether the cache answers now (its change feed is live and it is switched on). */
  answering: boolean;
}

export class ProfileCache {
  private readonly entries: LRUCache<string, Entry> | undefined;
  private epoch = 0;
  private hits = 0;
  private misses = 0;

  constructor(
    readonly maxEntries: number,
    /** Whether the change feed vouches for having heard every change right now. */
    private readonly isLive: () => boolean,
    /** Which loaded names are kept; by default those looked up before, within the last `maxEntries` names. */
    private readonly admission: Admission = new CacheAdmission(maxEntries),
  ) {
    this.entries = maxEntries > 0 ? new LRUCache<string, Entry>({ max: maxEntries }) : undefined;
  }

  /** The cached answer: a profile, null for a name known to have none, undefined when unknown. */
  get(name: string): Profile | null | undefined {
    if (this.entries === undefined || !this.isLive()) return undefined;
    const entry = this.entries.get(name);
    if (entry === undefined) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    return entry === NOT_FOUND ? null : entry;
  }

  /** Take one before loading; `fill` with it after. */
  ticket(): number {
    return this.epoch;
  }

  /**
   * Keeps what a load found, unless something was evicted since the load began or the name was
   * not looked up before (the admission's window).
   */
  fill(name: string, profile: Profile | null, ticket: number): void {
    if (this.entries === undefined || ticket !== this.epoch || !this.isLive()) return;
    if (!this.admission.admits(name)) return;
    profile?.markKeptByCache();
    this.entries.set(name, profile ?? NOT_FOUND);
  }

  evict(names: readonly string[]): void {
    this.epoch += 1;
    for (const name of names) this.entries?.delete(name);
  }

  clear(): void {
    this.epoch += 1;
    this.entries?.clear();
  }

  stats(): ProfileCacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      entries: this.entries?.size ?? 0,
      maxEntries: this.maxEntries,
      answering: this.entries !== undefined && this.isLive(),
    };
  }
}
