/**
 * The origin half of avatar images: a new variant made from its original, fetched safely
 * (./safe-fetch.ts) and resized (./image-resize.ts). Originals are kept for a short while, bounded
 * in bytes, so another size or format of the same image does not fetch it again; concurrent
 * fetches of one original share one; fetches run at most `fetchesPerHost` per host and `fetches`
 * in all, resizes at most `resizes` at once.
 *
 * This is the work that takes CPU and memory by the megabyte (originals of hundreds of kilobytes,
 * libvips), so the service runs it in a process of its own at idle priority (./origin-process.ts); the variant half
 * (variants kept, failures remembered, the bound on new variants a second) stays with the event
 * loop in ./avatar-images.ts.
 */
import { LRUCache } from 'lru-cache';
import type { AddressPolicy } from '../outbound/address-policy.js';
import { KeyedSlots, Slots } from './concurrency.js';
import {
  type FormatChoice,
  type ImageFailure,
  type ResizedImage,
  resizeOriginal,
  UnusableImageError,
} from './image-resize.js';
import { OutboundError, type OutboundFailure, type Resolver, safeFetch } from './safe-fetch.js';

/**
 * What became of an original: `ok` when it was fetched, decoded and resized; else why not, from
 * the fetch (OutboundFailure), the bytes (ImageFailure), `busy` (not fetched now: see BusyError), or
 * `internal-error` (the origin process ended meanwhile, or a failure of the service's own). Metrics
 * count fetches by it; a failed original is remembered with it.
 */
export type ImageOutcome = 'ok' | OutboundFailure | ImageFailure | 'busy' | 'internal-error';
export const IMAGE_OUTCOMES: readonly ImageOutcome[] = [
  'ok',
  'refused-url',
  'refused-address',
  'timeout',
  'too-large',
  'http-error',
  'redirect-limit',
  'network-error',
  'not-image',
  'too-many-pixels',
  'decode-error',
  'busy',
  'internal-error',
];

/**
 * The end of an origin fetch: its outcome, the bytes of the body it received (0 without a whole
 * body), and its own duration (a fetch whose body was received ends with the first resize of it,
 * which decides the outcome; that resize is not part of the duration).
 */
export type FetchEnd = (outcome: ImageOutcome, bytes: number, seconds: number) => void;

/** Where the figures of origin fetches and resizes go (metrics; tracing of origin fetches). */
export interface OriginObserver {
  /**
   * An origin fetch is starting; the returned function is called once its outcome is known.
   * `asker` is what the caller of `make` passed for the variant that needs this fetch (the origin
   * process: its job).
   */
  fetchStarted(host: string, asker?: number): FetchEnd;
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
  /** The variant's bytes, or an OutboundError, UnusableImageError or BusyError. */
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

/**
 * An original as `make` gets it: its bytes, and, for bytes just fetched, the end of that fetch
 * (called once: the first resize of the bytes decides the fetch's outcome).
 */
interface Original {
  body: Buffer;
  ended?: (outcome: ImageOutcome) => void;
}

export class OriginImages implements VariantMaker {
  private readonly originals: LRUCache<string, Buffer>;
  private readonly originalFlights = new Map<string, Promise<Original>>();
  private readonly fetchSlots: KeyedSlots;
  private readonly resizeSlots: Slots;

  constructor(private readonly options: OriginImagesOptions) {
    this.originals = new LRUCache<string, Buffer>({
      // Enough for the other sizes and formats asked for soon after the first (a page's srcset):
      // each original held is also resident memory, and one evicted is garbage only a full
      // collection frees (docs/decisions.md, "The avatar variant cache bounded by what it takes").
      maxSize: options.originalBytes ?? ORIGINAL_BYTES,
      sizeCalculation: (body) => Math.max(body.length, 1),
      ttl: ORIGINAL_TTL_MS,
    });
    this.fetchSlots = new KeyedSlots(options.fetchesPerHost ?? 2, options.fetches ?? 4);
    this.resizeSlots = new Slots(options.resizes ?? 1);
  }

  async make(request: VariantRequest, asker?: number): Promise<ResizedImage> {
    const { body, ended } = await this.original(request.url, asker);
    const started = performance.now();
    let resized: ResizedImage;
    try {
      resized = await this.resizeSlots.run(() => resizeOriginal(body, request.size, request.format));
    } catch (error) {
      ended?.(outcomeOf(error));
      throw error;
    }
    this.options.observer?.resized((performance.now() - started) / 1000);
    ended?.('ok');
    return resized;
  }

  async close(): Promise<void> {
    this.originals.clear();
  }

  private original(url: string, asker: number | undefined): Promise<Original> {
    const held = this.originals.get(url);
    if (held !== undefined) return Promise.resolve({ body: held });
    let flight = this.originalFlights.get(url);
    if (flight === undefined) {
      flight = this.fetchOriginal(url, asker).finally(() => this.originalFlights.delete(url));
      this.originalFlights.set(url, flight);
    }
    return flight;
  }

  private async fetchOriginal(url: string, asker: number | undefined): Promise<Original> {
    const host = hostOf(url);
    const { timeoutMs, maxBytes, policy, resolve } = this.options;
    const asked = performance.now();
    // Waiting for a slot is bounded too: a crowd of new avatars answers fallbacks, not a queue.
    const waited = AbortSignal.timeout(timeoutMs);
    return this.fetchSlots
      .run(
        host,
        async (): Promise<Original> => {
          const end = this.options.observer?.fetchStarted(host, asker);
          const started = performance.now();
          let body: Buffer;
          try {
            ({ body } = await safeFetch(url, { policy, timeoutMs, maxBytes, resolve }));
          } catch (error) {
            end?.(outcomeOf(error), 0, (performance.now() - started) / 1000);
            throw error;
          }
          const seconds = (performance.now() - started) / 1000;
          this.originals.set(url, body);
          return { body, ended: end === undefined ? undefined : once((outcome) => end(outcome, body.length, seconds)) };
        },
        waited,
      )
      .catch((error: unknown) => {
        if (waited.aborted && !(error instanceof OutboundError)) {
          // Counted with the fetches (the wait is its duration), though nothing was fetched.
          this.options.observer?.fetchStarted(host, asker)('busy', 0, (performance.now() - asked) / 1000);
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
  if (error instanceof OutboundError) return error.failure;
  if (error instanceof UnusableImageError) return error.failure;
  if (error instanceof BusyError) return 'busy';
  return 'internal-error';
}

/** `report`, called the first time only: concurrent variants of one fetched original share its end. */
function once(report: (outcome: ImageOutcome) => void): (outcome: ImageOutcome) => void {
  let reported = false;
  return (outcome) => {
    if (reported) return;
    reported = true;
    report(outcome);
  };
}
