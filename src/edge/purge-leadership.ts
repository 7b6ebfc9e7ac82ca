/**
 * Which process purges, and what it is told: starts the purge queues (./purge-queues.ts) under
 * this process's part in electing the one process of the deployment that purges (an advisory
 * lock, src/db/leader-lock.ts), and hands them what the change feed hears. Without
 * CACHE_PURGE_URLS nothing here runs.
 */
import type { ChangeFeedHandlers } from '../db/change-feed.js';
import type { DatabaseHandle } from '../db/handle.js';
import { PURGE_LEADER_KEY } from '../db/leader-lock.js';
import type { Logger } from '../logging/logger.js';
import type { EdgeCaching } from './edge-caching.js';
import { type PurgeObserver, Purger, type PurgerStats } from './purge-queues.js';
import { sendPurge } from './purge-request.js';

export interface Purging {
  purger: Purger;
  close(): Promise<void>;
}

/** The purger and its leadership; undefined without cache URLs. */
export function startPurging(
  urls: readonly string[],
  database: Pick<DatabaseHandle, 'leadership'>,
  logger: Logger,
  /** Metrics of the purger, read when they are scraped (after the purger exists). */
  observe: (stats: () => PurgerStats) => PurgeObserver,
): Purging | undefined {
  if (urls.length === 0) return undefined;
  const purger: Purger = new Purger({
    urls: [...urls],
    send: (url, tags) => sendPurge(url, tags),
    logger,
    observer: observe(() => purger.stats()),
  });
  const leadership = database.leadership(PURGE_LEADER_KEY, {
    lead: () => purger.lead(),
    follow: (reason) => {
      logger.warn({ reason }, 'purge leadership lost');
      purger.follow();
    },
  });
  return {
    purger,
    async close() {
      purger.close();
      await leadership.close();
    },
  };
}

/**
 * What the change feed tells shared caches: every change heard makes answers computed around it
 * unshareable, and the leader's purger purges its tags; a feed that comes back after being lost
 * may have missed changes, so the caches are purged whole.
 */
export function edgeFeedHandlers(edge: EdgeCaching, purger: Purger | undefined): ChangeFeedHandlers {
  return {
    onChange: (change) => {
      edge.changed();
      purger?.changed(change, change.at);
    },
    onLive: () => {
      edge.changed();
      purger?.everything();
    },
    onLost: () => {
      edge.changed();
    },
  };
}
