/**
 * Avatar images: the size×size variant of a profile's image, fetched from its origin safely
 * (./safe-fetch.ts) and resized (./image-resize.ts). Around those two:
 *
 * - variants are kept (./variant-store.ts), and originals for a short while, bounded in bytes,
 *   so another size or format of the same image does not fetch it again;
 * - concurrent first requests for one variant share one fetch and one resize (single flight),
 *   as do concurrent fetches of one original;
 * - a failed original is remembered for FAILURE_MEMORY_MS: a broken origin is not asked on every
 *   request, and its answers (the fallback) are cached no longer than that by clients;
 * - origin fetches run at most `fetchesPerHost` per host and `fetches` in all; resizes run at
 *   most `resizes` at once on sharp's thread pool, so the event loop and the lookups keep going
 *   while avatars are resized.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from '../logging/logger.js';
import type { AddressPolicy } from './address-policy.js';
import { type GateClock, KeyedSlots, RateGate, Slots } from './concurrency.js';
import { type FormatChoice, resizeOriginal, UnusableImageError } from './image-resize.js';
import { OriginFetchError, type Resolver, safeFetch } from './safe-fetch.js';
import { type Variant, VariantStore, variantOf } from './variant-store.js';

/** How long a failed original is remembered (and the longest its fallback may be cached). */
export const FAILURE_MEMORY_MS = 60_000;
/** Part of every variant key and of the avatar version: raise it when the resizing changes. */
export const AVATAR_IMAGE_REVISION = 1;

/** What became of an original: used, or why not. Metrics count fetches by it. */
export type ImageOutcome = 'ok' | 'refused' | 'timeout' | 'too-large' | 'not-image' | 'error' | 'busy';
export const IMAGE_OUTCOMES: readonly ImageOutcome[] = [
  'ok',
  'refused',
  'timeout',
  'too-large',
  'not-image',
  'error',
  'busy',
];

/** Where the figures of avatar images go (metrics; tracing of origin fetches). */
export interface AvatarImageObserver {
  /** An origin fetch is starting; the returned function is called once it ended. */
  fetchStarted(host: string): (outcome: ImageOutcome, bytes: number) => void;
  resized(seconds: number): void;
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
  diskBytes?: number;
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
  /** The rate bound's clock (tests). */
  clock?: GateClock;
  observer?: AvatarImageObserver;
  /** Host name resolution (tests). */
  resolve?: Resolver;
}

export interface VariantRequest {
  /** The http(s) URL of the original. */
  url: string;
  size: number;
  format: FormatChoice;
}

export type VariantResult = { kind: 'variant'; variant: Variant } | { kind: 'failed'; outcome: ImageOutcome };

const ORIGINAL_TTL_MS = 10 * 60_000;
const ORIGINAL_BYTES = 8 * 1024 * 1024;

export class AvatarImages {
  private readonly store: VariantStore;
  private readonly originals: LRUCache<string, Buffer>;
  private readonly failures = new LRUCache<string, ImageOutcome>({ max: 10_000, ttl: FAILURE_MEMORY_MS });
  private readonly variantFlights = new Map<string, Promise<VariantResult>>();
  private readonly originalFlights = new Map<string, Promise<Buffer>>();
  private readonly fetchSlots: KeyedSlots;
  private readonly resizeSlots: Slots;
  private readonly resizeGate: RateGate | undefined;

  constructor(private readonly options: AvatarImagesOptions) {
    this.store = new VariantStore({
      memoryBytes: options.memoryBytes ?? 32 * 1024 * 1024,
      directory: options.directory,
      diskBytes: options.diskBytes ?? 512 * 1024 * 1024,
      logger: options.logger,
    });
    this.originals = new LRUCache<string, Buffer>({
      // Enough for the other sizes and formats asked for soon after the first (a page's srcset):
      // each original held is also resident memory, and one evicted is garbage only a full
      // collection frees (bench/README.md, "Avatars": 32 MB here cost about 28 MB of peak RSS).
      maxSize: options.originalBytes ?? ORIGINAL_BYTES,
      sizeCalculation: (body) => Math.max(body.length, 1),
      ttl: ORIGINAL_TTL_MS,
    });
    this.fetchSlots = new KeyedSlots(options.fetchesPerHost ?? 2, options.fetches ?? 4);
    this.resizeSlots = new Slots(options.resizes ?? 1);
    const rate = options.resizesPerSecond;
    // A second's worth may start at once, and as many may wait: none waits much longer than a second.
    const allowance = Math.max(1, Math.floor(rate ?? 1));
    this.resizeGate = rate === undefined ? undefined : new RateGate(rate, allowance, allowance, options.clock);
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
        this.options.observer?.fetchStarted(hostOf(request.url))('busy', 0);
        throw new BusyError('more new variants asked for than the bound per second allows');
      }
      const original = await this.original(request.url);
      const started = performance.now();
      const resized = await this.resizeSlots.run(() => resizeOriginal(original, request.size, request.format));
      this.options.observer?.resized((performance.now() - started) / 1000);
      const variant = variantOf(resized.body, resized.format);
      await this.store.set(key, variant);
      return { kind: 'variant', variant };
    } catch (error) {
      const outcome = outcomeOf(error);
      this.remember(request.url, outcome, error);
      return { kind: 'failed', outcome };
    }
  }

  private original(url: string): Promise<Buffer> {
    const held = this.originals.get(url);
    if (held !== undefined) return Promise.resolve(held);
    let flight = this.originalFlights.get(url);
    if (flight === undefined) {
      flight = this.fetchOriginal(url).finally(() => this.originalFlights.delete(url));
      this.originalFlights.set(url, flight);
    }
    return flight;
  }

  private async fetchOriginal(url: string): Promise<Buffer> {
    const host = hostOf(url);
    const { timeoutMs, maxBytes, policy, resolve } = this.options;
    // Waiting for a slot is bounded too: a crowd of new avatars answers fallbacks, not a queue.
    const waited = AbortSignal.timeout(timeoutMs);
    return this.fetchSlots
      .run(
        host,
        async () => {
          const ended = this.options.observer?.fetchStarted(host);
          try {
            const { body } = await safeFetch(url, { policy, timeoutMs, maxBytes, resolve });
            ended?.('ok', body.length);
            this.originals.set(url, body);
            return body;
          } catch (error) {
            ended?.(outcomeOf(error), 0);
            throw error;
          }
        },
        waited,
      )
      .catch((error: unknown) => {
        if (waited.aborted && !(error instanceof OriginFetchError)) {
          // Counted with the fetches (the wait is its duration), though nothing was fetched.
          this.options.observer?.fetchStarted(host)('busy', 0);
          throw new BusyError(`no fetch slot for ${host} in time`);
        }
        throw error;
      });
  }

  private remember(url: string, outcome: ImageOutcome, error: unknown): void {
    const host = hostOf(url);
    if (outcome === 'busy') {
      // Not remembered: the next request may find the service less busy.
      const reason = error instanceof Error ? error.message : String(error);
      this.options.logger.warn({ host, reason }, 'avatar variant not made now: the service is busy');
      return;
    }
    this.failures.set(url, outcome);
    // Expected of a public service (broken links, hostile URLs): information, not an error.
    const reason = error instanceof Error ? error.message : String(error);
    const log = outcome === 'error' && !isExpected(error) ? 'warn' : 'info';
    this.options.logger[log]({ host, outcome, reason }, 'avatar original not used; the fallback is answered');
  }
}

function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : '';
}

function variantKey(request: VariantRequest): string {
  return VariantStore.key([AVATAR_IMAGE_REVISION, request.url, request.size, request.format]);
}

/** Not now: no fetch slot in time, or new variants over the bound per second. */
class BusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BusyError';
  }
}

function isExpected(error: unknown): boolean {
  return error instanceof OriginFetchError || error instanceof UnusableImageError;
}

function outcomeOf(error: unknown): ImageOutcome {
  if (error instanceof OriginFetchError) return error.failure;
  if (error instanceof UnusableImageError) return error.failure;
  if (error instanceof BusyError) return 'busy';
  return 'error';
}
