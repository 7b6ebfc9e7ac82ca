/**
 * Gives start-up's garbage back to the operating system before the service starts listening.
 *
 * Loading the code and building the schema leave V8's young generation grown to its maximum
 * (`--max-semi-space-size`) and the old space fragmented: memory resident that an idle service
 * never uses. V8 would shrink them in a memory-reducing collection, but its memory
 * reducer only starts one when it has measured a low allocation rate, which it measures at
 * collections, and an idle service collects nothing: the start-up rate stays on record and the
 * memory stays resident for good (seen with `--trace-memory-reducer`: "high alloc" again and
 * again). So the service asks for that collection itself, once, when `gc` is exposed
 * (`--expose-gc` is one of `npm start`'s flags, package.json `config.nodeFlags`), before the
 * first request. The figures: docs/decisions.md, "One memory-reducing collection before listening".
 */

/** V8's `gc` as `--expose-gc` installs it (V8 11+ accepts these options). */
type ExposedGc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface ReleasedMemory {
  /** Resident set before and after, in MB. */
  rssBeforeMb: number;
  rssAfterMb: number;
  tookMs: number;
}

/** Runs a memory-reducing full collection; undefined when `gc` is not exposed (tests, `npm run dev`). */
export function releaseStartUpMemory(): ReleasedMemory | undefined {
  const gc = (globalThis as { gc?: ExposedGc }).gc;
  if (typeof gc !== 'function') return undefined;
  const rssBefore = process.memoryUsage.rss();
  const started = performance.now();
  // 'last-resort' is the flavor that reduces the footprint: it shrinks the young generation and
  // compacts the old one, as the memory reducer would.
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  const toMb = (bytes: number) => Math.round(bytes / 1e5) / 10;
  return {
    rssBeforeMb: toMb(rssBefore),
    rssAfterMb: toMb(process.memoryUsage.rss()),
    tookMs: Math.round(performance.now() - started),
  };
}
