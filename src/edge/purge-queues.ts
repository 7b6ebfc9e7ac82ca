/**
 * The purge queues (the purger): keep shared caches fresh by purging, on every configured cache,
 * the tags of every change (./tags.ts), within a second of its commit; each purge is one request
 * of ./purge-request.ts.
 *
 * - Only the deployment's leader purges (src/db/leader-lock.ts decides; `lead()` and `follow()` tell
 *   the purger). Every process hears every change, so without a leader each change would be
 *   purged once per process.
 * - Each cache has a queue of its own: one slow or failing cache does not hold the others back.
 *   Tags that arrive while a purge is under way go out together in the next one.
 * - A purge that fails is retried with a growing delay (RETRY_INITIAL_MS doubling to
 *   RETRY_MAX_MS), its tags kept, until the cache accepts it.
 * - A cache is purged whole (the tag every answer carries) when its backlog passes MAX_BACKLOG
 *   tags, when everything may have changed (a change without names), when the change feed was
 *   lost (changes in between were not heard), and when this process becomes the leader (what
 *   the previous leader had not purged yet was lost with it).
 * - Every change is purged twice: at once, and SETTLE_MS later. An answer computed from the old
 *   data by a process that had not heard the change yet may reach the cache after the first
 *   purge; every process hears a change within about a second of its commit while its feed is
 *   live (and marks answers computed around a change private, src/edge/edge-caching.ts), so the
 *   second purge drops such answers.
 */
import type { ProfileChange } from '../db/change-notifications.js';
import type { Logger } from '../logging/logger.js';
import { ALL_TAG, tagsOfChange } from './tags.js';

const MAX_BACKLOG = 10_000;
const RETRY_INITIAL_MS = 100;
const RETRY_MAX_MS = 5000;
const SETTLE_MS = 2000;

export interface PurgeObserver {
  sent(cache: string): void;
  failed(cache: string): void;
  /** Seconds from a change's commit (as its writer stamped it, or as heard) to its first purge. */
  commitToPurge(seconds: number): void;
}

export interface PurgerOptions {
  /** CACHE_PURGE_URLS. */
  urls: readonly string[];
  send(url: string, tags: readonly string[]): Promise<void>;
  logger: Logger;
  observer?: PurgeObserver;
  maxBacklog?: number;
  retryInitialMs?: number;
  retryMaxMs?: number;
  settleMs?: number;
  now?: () => number;
}

export interface PurgerStats {
  /** Tags waiting per cache (a whole purge counts one). */
  pending: Record<string, number>;
  leading: boolean;
}

/** One cache's backlog: tags (with the commit time of the change to measure, if any) or everything. */
class CacheQueue {
  readonly tags = new Map<string, number | undefined>();
  whole = false;
  sending = false;
  failures = 0;
  retry: NodeJS.Timeout | undefined;

  constructor(readonly url: string) {}

  get pending(): number {
    return this.whole ? 1 : this.tags.size;
  }
}

export class Purger {
  private readonly queues: CacheQueue[];
  private readonly timers = new Set<NodeJS.Timeout>();
  private leading = false;
  private closed = false;
  private readonly maxBacklog: number;
  private readonly retryInitialMs: number;
  private readonly retryMaxMs: number;
  private readonly settleMs: number;
  private readonly now: () => number;

  constructor(private readonly options: PurgerOptions) {
    this.queues = options.urls.map((url) => new CacheQueue(url));
    this.maxBacklog = options.maxBacklog ?? MAX_BACKLOG;
    this.retryInitialMs = options.retryInitialMs ?? RETRY_INITIAL_MS;
    this.retryMaxMs = options.retryMaxMs ?? RETRY_MAX_MS;
    this.settleMs = options.settleMs ?? SETTLE_MS;
    this.now = options.now ?? Date.now;
  }

  /** This process now purges for the deployment: what the previous leader left is unknown. */
  lead(): void {
    if (this.leading || this.closed) return;
    this.leading = true;
    this.options.logger.info({ caches: this.queues.length }, 'purging shared caches for the deployment');
    this.everything();
  }

  /** Another process purges now: this one drops its backlog (the new leader purges whole). */
  follow(): void {
    if (!this.leading) return;
    this.leading = false;
    this.options.logger.warn('no longer purging shared caches: another process leads');
    for (const queue of this.queues) {
      queue.tags.clear();
      queue.whole = false;
      clearTimeout(queue.retry);
      queue.retry = undefined;
      queue.failures = 0;
    }
  }

  /** A change heard on the feed; `committedAt` when its writer stamped its commit time. */
  changed(change: ProfileChange, committedAt?: number): void {
    if (!this.leading) return;
    const tags = tagsOfChange(change);
    if (tags === undefined) {
      this.everything();
      return;
    }
    this.enqueue(tags, committedAt ?? this.now());
    const again = setTimeout(() => {
      this.timers.delete(again);
      if (this.leading) this.enqueue(tags, undefined);
    }, this.settleMs);
    again.unref();
    this.timers.add(again);
  }

  /** Every cache is purged whole (the feed was lost and is back, or everything changed). */
  everything(): void {
    if (!this.leading) return;
    for (const queue of this.queues) {
      queue.whole = true;
      queue.tags.clear();
      this.schedule(queue);
    }
  }

  stats(): PurgerStats {
    return {
      pending: Object.fromEntries(this.queues.map((queue) => [queue.url, queue.pending])),
      leading: this.leading,
    };
  }

  close(): void {
    this.closed = true;
    this.leading = false;
    for (const timer of this.timers) clearTimeout(timer);
    for (const queue of this.queues) clearTimeout(queue.retry);
  }

  private enqueue(tags: readonly string[], committedAt: number | undefined): void {
    for (const queue of this.queues) {
      if (!queue.whole) {
        for (const tag of tags) {
          const known = queue.tags.get(tag);
          queue.tags.set(tag, known === undefined ? committedAt : Math.min(known, committedAt ?? known));
        }
        if (queue.tags.size > this.maxBacklog) {
          this.options.logger.warn(
            { cache: queue.url, tags: queue.tags.size },
            'purge backlog too long: purging the cache whole',
          );
          queue.whole = true;
          queue.tags.clear();
        }
      }
      this.schedule(queue);
    }
  }

  /** Sends the queue's backlog as soon as no purge of it is under way or waiting to be retried. */
  private schedule(queue: CacheQueue): void {
    if (queue.sending || queue.retry !== undefined || this.closed) return;
    if (!queue.whole && queue.tags.size === 0) return;
    queue.sending = true;
    const whole = queue.whole;
    const batch = new Map(queue.tags);
    queue.whole = false;
    queue.tags.clear();
    const tags = whole ? [ALL_TAG] : [...batch.keys()];
    void this.options.send(queue.url, tags).then(
      () => this.succeeded(queue, batch),
      (error: unknown) => this.failedWith(queue, whole, batch, error),
    );
  }

  private succeeded(queue: CacheQueue, batch: ReadonlyMap<string, number | undefined>): void {
    queue.sending = false;
    queue.failures = 0;
    this.options.observer?.sent(queue.url);
    const now = this.now();
    for (const committedAt of new Set(batch.values())) {
      if (committedAt !== undefined) this.options.observer?.commitToPurge(Math.max(0, now - committedAt) / 1000);
    }
    if (this.leading) this.schedule(queue);
  }

  private failedWith(
    queue: CacheQueue,
    whole: boolean,
    batch: ReadonlyMap<string, number | undefined>,
    error: unknown,
  ): void {
    queue.sending = false;
    queue.failures += 1;
    this.options.observer?.failed(queue.url);
    if (!this.leading || this.closed) return;
    // What failed goes back into the backlog, in front of nothing: order does not matter to a purge.
    if (whole) {
      queue.whole = true;
      queue.tags.clear();
    } else if (!queue.whole) {
      for (const [tag, committedAt] of batch) {
        const known = queue.tags.get(tag);
        queue.tags.set(tag, known === undefined ? committedAt : Math.min(known, committedAt ?? known));
      }
      if (queue.tags.size > this.maxBacklog) {
        queue.whole = true;
        queue.tags.clear();
      }
    }
    const delay = Math.min(this.retryMaxMs, this.retryInitialMs * 2 ** (queue.failures - 1));
    if (queue.failures === 1 || queue.failures % 10 === 0) {
      this.options.logger.warn(
        { cache: queue.url, failures: queue.failures, retryInMs: delay, reason: (error as Error).message },
        'purge failed; retrying',
      );
    }
    queue.retry = setTimeout(() => {
      queue.retry = undefined;
      this.schedule(queue);
    }, delay);
    queue.retry.unref();
  }
}
