/**
 * Avatar images: the size×size variant of a profile's image. This is the variant half, on the
 * event loop: variants are kept (./variant-store.ts); concurrent first requests for one variant
 * share one making (single flight); a failed original is remembered for FAILURE_MEMORY_MS, so a
 * broken origin is not asked on every request and its answers (the fallback) are cached no
 * longer than that by clients; new variants are bounded per second. Making a new variant (fetch
 * and resize, ./origin-images.ts) runs in the origin process at idle priority
 * (./origin-process.ts), so the lookups keep their latency while avatars are made.
 */
import { LRUCache } from 'lru-cache';
import { DEFAULT_VARIANT_FILES } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import type { AddressPolicy } from '../outbound/address-policy.js';
import { type GateClock, RateGate, REAL_CLOCK } from './concurrency.js';
import {
  BusyError,
  hostOf,
  type ImageOutcome,
  OriginImages,
  type OriginObserver,
  outcomeOf,
  type VariantMaker,
  type VariantRequest,
} from './origin-images.js';
import { OriginProcess } from './origin-process.js';
import type { Resolver } from './safe-fetch.js';
import { type Variant, VariantStore, variantOf } from './variant-store.js';

export { IMAGE_OUTCOMES, type ImageOutcome, type VariantRequest } from './origin-images.js';

/** How long a failed original is remembered (and the longest its fallback may be cached). */
export const FAILURE_MEMORY_MS = 60_000;
/** Part of every variant key and of the avatar version: raise it when the resizing changes. */
export const AVATAR_IMAGE_REVISION = 1;
/**
 * Variants not made because the service was busy are logged at most this often, with how many
 * there were: a burst of new avatars (a page of them) must not flood the log. Each one is counted
 * in `avatar_origin_fetches_total{outcome="busy"}` as it happens.
 */
export const BUSY_LOG_INTERVAL_MS = 10_000;

/** Where the figures of avatar images go (metrics; tracing of origin fetches). */
export interface AvatarImageObserver extends OriginObserver {
  variantLookup(hit: boolean): void;
}

export interface AvatarImagesOptions {
  policy: AddressPolicy;
  timeoutMs: number;
  maxBytes: number;
  logger: Logger;
  /** Bytes of resized variants kept in memory. */
  memoryBytes?: number;
  /** Directory for variants on disk; undefined: memory only. */
  directory?: string;
  /** Disk space the variant files may take, as allocated (default 512 MiB). */
  diskBytes?: number;
  /** Variant files at most (AVATAR_VARIANT_CACHE_FILES, default DEFAULT_VARIANT_FILES). */
  diskFiles?: number;
  /** Bytes of originals kept briefly for other variants (default 8 MB). */
  originalBytes?: number;
  /** Origin fetches at once per host (default 2) and in all (default 4: each may hold AVATAR_MAX_BYTES). */
  fetchesPerHost?: number;
  fetches?: number;
  resizes?: number;
  /**
   * New variants started per second at most (undefined: no bound): a token bucket holding a
   * second's worth; as many requests wait their turn, and those beyond get the fallback ('busy').
   */
  resizesPerSecond?: number;
  /** The clock of the rate bound, the failure memory and the origin process's restart pause (tests). */
  clock?: GateClock;
  /**
   * False: the origin process keeps the service's priority instead of idle priority. The idle
   * class gives that process no CPU at all while other work wants every core, so tests whose
   * answers must not depend on spare CPU set it (the idle priority has a test of its own).
   */
  idlePriority?: boolean;
  observer?: AvatarImageObserver;
  /**
   * Host name resolution (tests). A function cannot be handed to another process: with it, new
   * variants are made on the event loop instead of in the origin process.
   */
  resolve?: Resolver;
}

export type VariantResult = { kind: 'variant'; variant: Variant } | { kind: 'failed'; outcome: ImageOutcome };

export class AvatarImages {
  private readonly store: VariantStore;
  private readonly failures: LRUCache<string, ImageOutcome>;
  private readonly variantFlights = new Map<string, Promise<VariantResult>>();
  private readonly maker: VariantMaker;
  private readonly resizeGate: RateGate | undefined;
  private readonly clock: GateClock;
  /** The last busy line's time, and the busy variants since (see BUSY_LOG_INTERVAL_MS). */
  private busyLoggedAt = Number.NEGATIVE_INFINITY;
  private busySinceLogged = 0;

  constructor(private readonly options: AvatarImagesOptions) {
    this.store = new VariantStore({
      memoryBytes: options.memoryBytes ?? 32 * 1024 * 1024,
      directory: options.directory,
      diskBytes: options.diskBytes ?? 512 * 1024 * 1024,
      diskFiles: options.diskFiles ?? DEFAULT_VARIANT_FILES,
      logger: options.logger,
    });
    this.clock = options.clock ?? REAL_CLOCK;
    // The clock read at every check (no resolution): a test's clock moves between two reads.
    this.failures = new LRUCache({ max: 10_000, ttl: FAILURE_MEMORY_MS, ttlResolution: 0, perf: this.clock });
    const { policy, timeoutMs, maxBytes, originalBytes, fetchesPerHost, fetches, resizes, observer } = options;
    const makerOptions = { policy, timeoutMs, maxBytes, originalBytes, fetchesPerHost, fetches, resizes, observer };
    this.maker =
      options.resolve !== undefined
        ? new OriginImages({ ...makerOptions, resolve: options.resolve })
        : new OriginProcess(
            { ...makerOptions, idlePriority: options.idlePriority ?? true },
            options.logger,
            this.clock,
          );
    const rate = options.resizesPerSecond;
    // A second's worth may start at once, and as many may wait: none waits much longer than a second.
    const allowance = Math.max(1, Math.floor(rate ?? 1));
    this.resizeGate = rate === undefined ? undefined : new RateGate(rate, allowance, allowance, this.clock);
  }

  /** Stops the origin process, at shutdown (the variants it was making fail; another new variant would start another). */
  close(): Promise<void> {
    return this.maker.close();
  }

  /** The variant when it is in memory (a hit, counted as one), else undefined: ask `variant`. */
  held(request: VariantRequest): Variant | undefined {
    const held = this.store.held(variantKey(request));
    if (held !== undefined) this.options.observer?.variantLookup(true);
    return held;
  }

  /** The variant, or why the original cannot be used (the caller answers the fallback). */
  async variant(request: VariantRequest): Promise<VariantResult> {
    const key = variantKey(request);
    const stored = await this.store.get(key);
    this.options.observer?.variantLookup(stored !== undefined);
    if (stored !== undefined) return { kind: 'variant', variant: stored };
    const failed = this.failures.get(request.url);
    if (failed !== undefined) return { kind: 'failed', outcome: failed };
    let flight = this.variantFlights.get(key);
    if (flight === undefined) {
      flight = this.produce(key, request).finally(() => this.variantFlights.delete(key));
      this.variantFlights.set(key, flight);
    }
    return flight;
  }

  private async produce(key: string, request: VariantRequest): Promise<VariantResult> {
    try {
      if (this.resizeGate !== undefined && !(await this.resizeGate.admit())) {
        // Counted with the fetches, as a fetch that found no slot in time: nothing was fetched.
        this.options.observer?.fetchStarted(hostOf(request.url))('busy', 0, 0);
        throw new BusyError('more new variants asked for than the bound per second allows');
      }
      const resized = await this.maker.make(request);
      const variant = variantOf(resized.body, resized.format);
      await this.store.set(key, variant);
      return { kind: 'variant', variant };
    } catch (error) {
      const outcome = outcomeOf(error);
      this.remember(request.url, outcome, error);
      return { kind: 'failed', outcome };
    }
  }

  private remember(url: string, outcome: ImageOutcome, error: unknown): void {
    const host = hostOf(url);
    if (outcome === 'busy') {
      // Not remembered: the next request may find the service less busy.
      if (!(error instanceof BusyError && error.reported)) this.logBusy(host, error);
      return;
    }
    this.failures.set(url, outcome);
    // Expected of a public service (broken links, hostile URLs): information; only a failure of
    // the service's own is a warning.
    const reason = error instanceof Error ? error.message : String(error);
    const log = outcome === 'internal-error' ? 'warn' : 'info';
    this.options.logger[log]({ host, outcome, reason }, 'avatar original not used; the fallback is answered');
  }

  private logBusy(host: string, error: unknown): void {
    this.busySinceLogged += 1;
    const now = this.clock.now();
    if (now - this.busyLoggedAt < BUSY_LOG_INTERVAL_MS) return;
    const reason = error instanceof Error ? error.message : String(error);
    this.options.logger.warn(
      { host, reason, variants: this.busySinceLogged },
      `avatar variants not made now: the service is busy (logged at most every ${BUSY_LOG_INTERVAL_MS / 1000} s; \`variants\` counts them since the last such line)`,
    );
    this.busyLoggedAt = now;
    this.busySinceLogged = 0;
  }
}

function variantKey(request: VariantRequest): string {
  return VariantStore.key([AVATAR_IMAGE_REVISION, request.url, request.size, request.format]);
}
