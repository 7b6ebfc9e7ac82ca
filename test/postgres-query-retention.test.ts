/**
 * postgres.js 3.4.9 gives every query its `resolve` and `reject` as closures over the query,
 * assigned in the constructor. Measured on Node 20, 22 and 24: a query built that way, and the
 * rows it resolves with, outlive the young-generation collections they should die in, so every
 * result is promoted to the old generation and the service runs a full collection every few
 * hundred milliseconds under a batch load (src/db/README.md, "patches/postgres+3.4.9.patch").
 * The patch defines the two closures with `Object.defineProperty` instead (the same own,
 * writable, enumerable property), and the rows die young again.
 *
 * The test resolves queries with rows as the driver does and adds up what the young-generation
 * collections promote; beside it the same loop with the unpatched constructor's pattern, whose
 * figure is what the patch removes. The Query class is loaded from its file: the package
 * exports only its entry point.
 */
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { GCProfiler, type HeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';

type Handler = (query: unknown) => void;
interface QueryLike extends Promise<unknown> {
  resolve(value: unknown): void;
}
type QueryClass = new (strings: string[], args: unknown[], handler: Handler) => QueryLike;

async function loadPatchedQuery(): Promise<QueryClass> {
  const file = path.join(process.cwd(), 'node_modules', 'postgres', 'src', 'query.js');
  return ((await import(pathToFileURL(file).href)) as { Query: QueryClass }).Query;
}

/** The unpatched constructor's pattern: the closures assigned, not defined. */
class AssignedClosures extends Promise<unknown> {
  // Declared only: a class field would define the property first, which is the patch's way.
  declare active: boolean;
  declare resolve: (value: unknown) => void;

  constructor(_strings: string[], _args: unknown[], _handler: Handler) {
    let settle: (value: unknown) => void = () => undefined;
    super((resolve) => {
      settle = resolve;
    });
    this.active = false;
    this.resolve = (value) => {
      this.active = false;
      settle(value);
    };
  }

  static override get [Symbol.species]() {
    return Promise;
  }
}

const source = Buffer.alloc(1_000, 'x');

/** A result as the driver builds it: a hundred rows of strings read from a socket's bytes. */
function rows(): string[][] {
  return Array.from({ length: 100 }, (_, row) => [
    source.toString('latin1', 0, 20 + (row % 7)),
    source.toString('latin1', 0, 450),
  ]);
}

/**
 * Bytes the young-generation collections promoted to the old generation while `queries` queries
 * were resolved and awaited in turn (what the old generation grew by across each of them).
 */
async function promotedBytes(Query: QueryClass, queries: number): Promise<number> {
  const profiler = new GCProfiler();
  profiler.start();
  let received = 0;
  for (let i = 0; i < queries; i += 1) {
    const query = new Query(['select'], [], () => undefined);
    // The answer arrives on a later turn, as a socket's data does.
    await nextTurn();
    query.resolve(rows());
    received += ((await query) as string[][]).length;
  }
  const { statistics } = profiler.stop();
  expect(received).toBe(queries * 100);
  const oldSpace = (side: { heapSpaceStatistics: HeapSpaceStatistics[] }) =>
    side.heapSpaceStatistics.find((space) => space.spaceName === 'old_space')?.spaceUsedSize ?? 0;
  return statistics
    .filter((collection) => collection.gcType === 'Scavenge')
    .reduce((sum, collection) => sum + oldSpace(collection.afterGC) - oldSpace(collection.beforeGC), 0);
}

describe("postgres.js's query objects (patched)", () => {
  it('let a result die young: resolving thousands of results promotes next to nothing to the old generation', async () => {
    const Query = await loadPatchedQuery();
    // The patched driver first: what the other loop promotes would not be collected before it.
    const patched = await promotedBytes(Query, 2_000);
    const assigned = await promotedBytes(AssignedClosures, 2_000);
    // Node 24: about 100 MB promoted with assigned closures, nothing with the patch. Where V8
    // no longer keeps them, both are near zero and the bound is the 16 MB floor.
    expect(patched).toBeLessThan(Math.max(16_000_000, assigned / 10));
  }, 60_000);

  it('still settles a query through its own resolve and reject, which stay writable own properties', async () => {
    const Query = await loadPatchedQuery();
    const query = new Query(['select'], [], () => undefined);
    expect(Object.getOwnPropertyDescriptor(query, 'resolve')).toMatchObject({
      writable: true,
      enumerable: true,
      configurable: true,
    });
    query.resolve(['row']);
    await expect(query).resolves.toEqual(['row']);
    const failing = new Query(['select'], [], () => undefined) as QueryLike & { reject(error: Error): void };
    failing.reject(new Error('refused'));
    await expect(failing).rejects.toThrow('refused');
  });
});
