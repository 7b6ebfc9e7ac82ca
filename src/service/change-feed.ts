/**
 * The change feed of one service process, as the profile cache and live updates need it: it
 * keeps the cache fresh and drives live updates (docs/design.md, "Hot profiles from memory").
 * With the cache on it starts with the app; with the cache off, on the first live-update
 * subscription, so a service that uses neither opens no LISTEN connection. A start that failed
 * (the database did not answer) is tried again by the next caller of `start`.
 *
 * While the feed is not live the cache neither answers nor fills; every transition empties it,
 * as changes may have been missed, and makes live updates read every watched name again. The
 * cache hears of a change first: the live updates' read after a change must not be answered
 * from the old entry.
 */

import type { ServiceDatabase } from '../loaders/loaders.js';
import type { Logger } from '../logging/logger.js';
import type { ProfileCache } from './profile-cache.js';

type ChangeFeedHandlers = Parameters<ServiceDatabase['listenForChanges']>[0];
type OpenFeed = Awaited<ReturnType<ServiceDatabase['listenForChanges']>>;

/** Who hears of changes besides the cache: the live-updates hub (./live-updates.ts). */
export interface ChangeListener {
  changed(names: readonly string[]): void;
  everythingMayHaveChanged(): void;
}

export interface ServiceChangeFeedDeps {
  database: Pick<ServiceDatabase, 'listenForChanges'>;
  logger: Logger;
}

export class ServiceChangeFeed {
  readonly #database: ServiceChangeFeedDeps['database'];
  readonly #logger: Logger;
  #cache: ProfileCache | undefined;
  #listener: ChangeListener | undefined;
  #others: readonly ChangeFeedHandlers[] = [];
  #feed: OpenFeed | undefined;
  #starting: Promise<void> | undefined;
  #closed = false;

  constructor({ database, logger }: ServiceChangeFeedDeps) {
    this.#database = database;
    this.#logger = logger;
  }

  /** Whether every change is heard now: the cache answers only then. */
  get live(): boolean {
    return this.#feed?.live === true;
  }

  /**
   * Whom the feed tells: the cache and the live-updates hub, then `others` (shared caches'
   * purging). They depend on the feed (whether it is live, its start), so they are built after it
   * and named here before it starts.
   */
  deliverTo(cache: ProfileCache, listener: ChangeListener, ...others: ChangeFeedHandlers[]): void {
    this.#cache = cache;
    this.#listener = listener;
    this.#others = others;
  }

  /** Resolves once changes are heard; a failed start is tried again by the next call. */
  start(): Promise<void> {
    if (this.#cache === undefined) return Promise.reject(new Error('the change feed was started before deliverTo'));
    this.#starting ??= this.#database.listenForChanges(this.#handlers()).then(
      async (opened) => {
        this.#feed = opened;
        if (this.#closed) await opened.close();
      },
      (error: unknown) => {
        this.#starting = undefined;
        throw error;
      },
    );
    return this.#starting;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#starting?.catch(() => {});
    await this.#feed?.close();
  }

  #handlers(): ChangeFeedHandlers {
    return {
      onChange: (change) => {
        if (change.kind === 'everything') {
          this.#cache?.clear();
          this.#listener?.everythingMayHaveChanged();
        } else {
          this.#cache?.evict(change.names);
          this.#listener?.changed(change.names);
        }
        for (const other of this.#others) other.onChange(change);
      },
      onApiKeyChange: (change) => {
        for (const other of this.#others) other.onApiKeyChange?.(change);
      },
      onLive: () => {
        this.#cache?.clear();
        this.#listener?.everythingMayHaveChanged();
        for (const other of this.#others) other.onLive();
        this.#logger.info('profile cache answering: change notifications are heard');
      },
      onLost: (reason) => {
        this.#cache?.clear();
        for (const other of this.#others) other.onLost(reason);
        this.#logger.warn({ reason }, 'profile cache bypassed until change notifications are heard again');
      },
    };
  }
}
