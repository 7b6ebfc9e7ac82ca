/**
 * The origin half of avatar images: a new variant made from its original, fetched safely
 * (./safe-fetch.ts) and resized (./image-resize.ts). Originals are kept for a short while, bounded
 * in bytes, so another size or format of the same image does not fetch it again; concurrent
 * fetches of one original share one; fetches run at most `fetchesPerHost` per host and `fetches`
 * in all, resizes at most `resizes` at once.
 *
 * This is the work that takes CPU and memory by the megabyte (485 KB originals, libvips), so the
 * service runs it in a process of its own at idle priority (./origin-process.ts); the variant half
 * (variants kept, failures remembered, the bound on new variants a second) stays with the event
 * loop in ./avatar-images.ts.
 */
import { LRUCache } from 'lru-cache';
import type { AddressPolicy } from './address-policy.js';
import { KeyedSlots, Slots } from './concurrency.js';
import { type FormatChoice, type ResizedImage, resizeOriginal, UnusableImageError } from './image-resize.js';
import { OriginFetchError, type Resolver, safeFetch } from './safe-fetch.js';

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

/** Where the figures of origin fetches and resizes go (metrics; tracing of origin fetches). */
export interface OriginObserver {
  /**
   * An origin fetch is starting; the returned function is called once it ended. `asker` is what
   * the caller of `make` passed for the variant that needs this fetch (the origin process: its job).
   */
  fetchStarted(host: string, asker?: number): (outcome: ImageOutcome, bytes: number) => void;
  resized(seconds: number): void;
}

export interface OriginImagesOptions {
  policy: AddressPolicy;
  timeoutMs: number;
  maxBytes: number;
  /** Bytes of originals kept briefly for other variants (default 8 MB). */
  originalBytes?: number;
  /** Origin fetches at once per host (default 2) and in all (default 4: each may hold AVATAR_MAX_BYTES). */
  fetchesPerHost?: number;
  fetches?: number;
  resizes?: number;
  observer?: OriginObserver;
  /** Host name resolution (tests). */
  resolve?: Resolver;
}

/** What a new variant is made from. */
export interface VariantRequest {
  /** The http(s) URL of the original. */
  url: string;
  size: number;
  format: FormatChoice;
}

/** Makes new variants; OriginImages here, or the same in the origin process. */
export interface VariantMaker {
  /** The variant's bytes, or an OriginFetchError, UnusableImageError or BusyError. */
  make(request: VariantRequest, asker?: number): Promise<ResizedImage>;
  close(): Promise<void>;
}

const ORIGINAL_TTL_MS = 10 * 60_000;
const ORIGINAL_BYTES = 8 * 1024 * 1024;

/**
 * Not now: no fetch slot in time, new variants over the bound per second, or the origin process
 * pausing before a restart. `reported`: its cause was logged once already, not per variant.
 */
export class BusyError extends Error {
  constructor(
    message: string,
    readonly reported = false,
  ) {
    super(message);
    this.name = 'BusyError';
  }
}

export class OriginImages implements VariantMaker {
  private readonly originals: LRUCache<string, Buffer>;
  private readonly originalFlights = new Map<string, Promise<Buffer>>();
  private readonly fetchSlots: KeyedSlots;
  private readonly resizeSlots: Slots;

  constructor(private readonly options: OriginImagesOptions) {
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
  }

  async make(request: VariantRequest, asker?: number): Promise<ResizedImage> {
    const original = await this.original(request.url, asker);
    const started = performance.now();
    const resized = await this.resizeSlots.run(() => resizeOriginal(original, request.size, request.format));
    this.options.observer?.resized((performance.now() - started) / 1000);
    return resized;
  }

  async close(): Promise<void> {
    this.originals.clear();
  }

  private original(url: string, asker: number | undefined): Promise<Buffer> {
    const held = this.originals.get(url);
    if (held !== undefined) return Promise.resolve(held);
    let flight = this.originalFlights.get(url);
    if (flight === undefined) {
      flight = this.fetchOriginal(url, asker).finally(() => this.originalFlights.delete(url));
      this.originalFlights.set(url, flight);
    }
    return flight;
  }

  private async fetchOriginal(url: string, asker: number | undefined): Promise<Buffer> {
    const host = hostOf(url);
    const { timeoutMs, maxBytes, policy, resolve } = this.options;
    // Waiting for a slot is bounded too: a crowd of new avatars answers fallbacks, not a queue.
    const waited = AbortSignal.timeout(timeoutMs);
    return this.fetchSlots
      .run(
        host,
        async () => {
          const ended = this.options.observer?.fetchStarted(host, asker);
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
          this.options.observer?.fetchStarted(host, asker)('busy', 0);
          throw new BusyError(`no fetch slot for ${host} in time`);
        }
        throw error;
      });
  }
}

export function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : '';
}

export function outcomeOf(error: unknown): ImageOutcome {
  if (error instanceof OriginFetchError) return error.failure;
  if (error instanceof UnusableImageError) return error.failure;
  if (error instanceof BusyError) return 'busy';
  return 'error';
}
