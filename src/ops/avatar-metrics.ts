/**
 * Avatar image figures in /metrics (src/avatars): origin fetches by outcome, bytes fetched,
 * fetch and resize durations, variant cache lookups by result. Observed as they happen.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { type AvatarImageObserver, IMAGE_OUTCOMES, type ImageOutcome } from '../avatars/avatar-images.js';

/** Seconds: from a resize of a small original to a fetch at its deadline. */
const AVATAR_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The observer that feeds the metrics; `originFetchSpan` (tracing, when on) is told of each
 * origin fetch too.
 */
export function registerAvatarMetrics(
  registry: Registry,
  originFetchSpan?: (host: string) => (outcome: ImageOutcome, seconds: number) => void,
): AvatarImageObserver {
  const fetches = new Counter({
    name: 'avatar_origin_fetches_total',
    help: `Fetches of avatar originals, by what became of them: ok (decoded and resized) or why not (${IMAGE_OUTCOMES.filter((outcome) => outcome !== 'ok').join(', ')}).`,
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of IMAGE_OUTCOMES) fetches.inc({ outcome }, 0);
  const bytes = new Counter({
    name: 'avatar_origin_bytes_total',
    help: 'Bytes of avatar originals received whole, whatever became of them.',
    registers: [registry],
  });
  const fetchDuration = new Histogram({
    name: 'avatar_origin_fetch_duration_seconds',
    help: 'Time of an avatar original fetch, redirects included, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: AVATAR_BUCKETS,
    registers: [registry],
  });
  const resizeDuration = new Histogram({
    name: 'avatar_resize_duration_seconds',
    help: 'Time to decode, resize and encode one avatar variant (waiting for a resize slot excluded).',
    buckets: AVATAR_BUCKETS,
    registers: [registry],
  });
  const lookups = new Counter({
    name: 'avatar_variant_cache_lookups_total',
    help: 'Lookups of resized avatar variants in the variant cache (memory, then disk), by result (hit or miss).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  lookups.inc({ result: 'hit' }, 0);
  lookups.inc({ result: 'miss' }, 0);
  return {
    fetchStarted(host) {
      const span = originFetchSpan?.(host);
      return (outcome, fetched, seconds) => {
        fetches.inc({ outcome });
        bytes.inc(fetched);
        fetchDuration.observe({ outcome }, seconds);
        span?.(outcome, seconds);
      };
    },
    resized(seconds) {
      resizeDuration.observe(seconds);
    },
    variantLookup(hit) {
      lookups.inc({ result: hit ? 'hit' : 'miss' });
    },
  };
}
