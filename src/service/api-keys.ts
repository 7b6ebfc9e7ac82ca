/**
 * Which API keys are valid, without a database round trip per request: a bounded LRU cache of
 * key hashes, valid ones with their limits and unknown or revoked ones, kept fresh by the change
 * feed like the profile cache (./profile-cache.ts).
 *
 * - Creating and revoking a key notifies every server in the same transaction
 *   (src/db/api-key-queries.ts); a server that hears it empties this cache, so the next request
 *   with the key reads it again. A lookup that began before the notice does not fill the cache.
 * - The cache answers only while the change feed is live, that is while it has heard its own
 *   heartbeat sent at most 1 s ago: notifications arrive in commit order, so a revocation is in
 *   force everywhere within about a second, also when a server's listening connection was cut.
 *   While the feed is not live every keyed request reads its key from the primary; when that
 *   read fails the request answers 503, never as if it had no key.
 * - A client address that sent UNKNOWN_KEYS_PER_MINUTE keys the database did not know within a
 *   minute gets no more lookups until the minute is over: a key of its that is not in the cache
 *   is answered 429 without a query (it may be valid: 401 would be wrong), so made-up keys cannot
 *   make the database work per request. Valid keys never count, cached keys always answer. Per
 *   process: it protects this process's database reads.
 * - When a key was last used is noted in memory and written for all keys at once every
 *   LAST_USED_FLUSH_MS (and at shutdown), so `keys list` is accurate to about a minute.
 */
import { LRUCache } from 'lru-cache';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Config } from '../config/config.js';
import { sameHash } from '../limits/api-key-credentials.js';
import { apiKeyIsActive, findApiKey, recordKeysUsed } from '../loaders/api-keys.js';
import type { ServiceDatabase } from '../loaders/loaders.js';
import type { Logger } from '../logging/logger.js';
import { asServiceError, describeFailure, RateLimitedError } from './errors.js';
import type { ApiKeyGrant } from './request.js';

const LAST_USED_FLUSH_MS = 60_000;
/** Unknown keys a client address may have looked up per minute (see above). */
export const UNKNOWN_KEYS_PER_MINUTE = 30;

/** Stands for "no valid key has this hash" (the cache cannot hold null). */
const NOT_FOUND = Symbol('not found');

export interface ApiKeyStoreDeps {
  database: ServiceDatabase;
  config: Pick<Config, 'apiKeyProfileLimit' | 'apiKeyOwnerCheckLimit' | 'apiKeyCacheSize'>;
  logger: Logger;
  /** Whether the change feed vouches for having heard every change right now. */
  isLive: () => boolean;
  /** Starts the change feed if it is not running (the first keyed request calls it). */
  startFeed: () => void;
  flushIntervalMs?: number;
}

export class ApiKeyStore {
  private readonly entries: LRUCache<string, ApiKeyGrant | typeof NOT_FOUND>;
  private readonly pending = new Map<string, Promise<ApiKeyGrant | null>>();
  private readonly usedAt = new Map<string, number>();
  private readonly unknownLookups = new RateLimiterMemory({
    keyPrefix: 'unknown-api-keys',
    points: UNKNOWN_KEYS_PER_MINUTE,
    duration: 60,
  });
  private readonly timer: NodeJS.Timeout;
  private epoch = 0;
  private feedStarted = false;

  constructor(private readonly deps: ApiKeyStoreDeps) {
    this.entries = new LRUCache({ max: deps.config.apiKeyCacheSize });
    this.timer = setInterval(() => void this.flushLastUsed(), deps.flushIntervalMs ?? LAST_USED_FLUSH_MS);
    this.timer.unref();
  }

  /**
   * The valid key with this hash, or null for an unknown or revoked one: at once from the cache,
   * else from the database. Rejects with an UnavailableError when the database cannot answer.
   * `clientOf` gives the address asking (the budget key of src/limits/client-key.ts); it is
   * called only when the key is read from the database, so a hit does not work it out.
   */
  resolve(hash: string, clientOf: () => string): ApiKeyGrant | null | Promise<ApiKeyGrant | null> {
    if (!this.feedStarted) {
      this.feedStarted = true;
      this.deps.startFeed();
    }
    if (this.deps.isLive()) {
      // The map's own equality decides a hit: comparing the same two hashes again in constant
      // time (two hex-to-Buffer conversions a request) would tell nothing more.
      const entry = this.entries.get(hash);
      if (entry === NOT_FOUND) return null;
      if (entry !== undefined) return this.used(entry);
    }
    return this.lookUp(hash, clientOf());
  }

  /** A key was created or revoked, or the feed was lost or regained: forget every key. */
  changed(): void {
    this.epoch += 1;
    this.entries.clear();
    this.pending.clear();
  }

  /** Whether key `id` is valid now (read from the primary). */
  isActive(id: string): Promise<boolean> {
    const { database } = this.deps;
    return apiKeyIsActive(database, id);
  }

  /** Writes when keys were last used; failures are logged and retried at the next flush. */
  async flushLastUsed(): Promise<void> {
    if (this.usedAt.size === 0) return;
    const batch = new Map([...this.usedAt].map(([id, at]) => [id, new Date(at)]));
    this.usedAt.clear();
    try {
      await recordKeysUsed(this.deps.database, batch);
    } catch (error) {
      for (const [id, at] of batch) {
        if ((this.usedAt.get(id) ?? 0) < at.getTime()) this.usedAt.set(id, at.getTime());
      }
      this.deps.logger.warn(
        { keys: batch.size, reason: describeFailure(error) },
        'API keys: last use not recorded; retrying at the next flush',
      );
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushLastUsed();
  }

  private async lookUp(hash: string, client: string): Promise<ApiKeyGrant | null> {
    let loading = this.pending.get(hash);
    if (loading === undefined) {
      const started: Promise<ApiKeyGrant | null> = this.load(hash, client).finally(() => {
        // A change may have replaced it with a newer lookup meanwhile.
        if (this.pending.get(hash) === started) this.pending.delete(hash);
      });
      loading = started;
      this.pending.set(hash, loading);
    }
    const grant = await loading;
    if (grant === null) {
      await this.unknownLookups.penalty(client, 1);
      return null;
    }
    return this.used(grant);
  }

  private used(grant: ApiKeyGrant): ApiKeyGrant {
    this.usedAt.set(grant.id, Date.now());
    return grant;
  }

  private async load(hash: string, client: string): Promise<ApiKeyGrant | null> {
    const epoch = this.epoch;
    const { database, config } = this.deps;
    const unknown = await this.unknownLookups.get(client);
    if (unknown !== null && unknown.consumedPoints >= UNKNOWN_KEYS_PER_MINUTE) {
      throw new RateLimitedError({
        allowed: false,
        limit: UNKNOWN_KEYS_PER_MINUTE,
        remaining: 0,
        resetSeconds: Math.max(1, Math.ceil(unknown.msBeforeNext / 1000)),
      });
    }
    let row: Awaited<ReturnType<typeof findApiKey>>;
    try {
      // The primary: a replica may not have replayed a revocation yet.
      row = await findApiKey(database, hash);
    } catch (error) {
      throw asServiceError(error) ?? error;
    }
    const grant: ApiKeyGrant | null =
      row === undefined || !sameHash(row.keyHash, hash)
        ? null
        : {
            id: row.id,
            limits: {
              profile: row.profileLimit ?? config.apiKeyProfileLimit,
              'owner-check': row.ownerCheckLimit ?? config.apiKeyOwnerCheckLimit,
            },
            documentsOnly: row.documentsOnly,
          };
    if (epoch === this.epoch && this.deps.isLive()) this.entries.set(hash, grant ?? NOT_FOUND);
    return grant;
  }
}
