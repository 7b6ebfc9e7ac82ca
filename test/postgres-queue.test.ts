/**
 * postgres.js keeps its connections in queues (open, busy, full, ...) and moves each one between
 * them for every query. In 3.4.9 a queue's array only shrinks when it empties on a shift, and
 * `remove` scans it from the start: under a steady load, which never empties the busy queue,
 * the array grew by one slot per query and every query scanned it, so a server got slower the
 * longer it ran (the bare benchmark server went from 16,000 to 7,000 answers per second in 48
 * seconds). patches/postgres+3.4.9.patch (applied by `npm install`) compacts the array.
 *
 * The patched Queue is loaded from its file: the package exports only its entry point.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

interface Queue<T> {
  readonly length: number;
  push(item: T): T;
  shift(): T | undefined;
  remove(item: T): T | null;
}

async function loadQueue(): Promise<<T>(initial?: T[]) => Queue<T>> {
  const file = path.join(process.cwd(), 'node_modules', 'postgres', 'src', 'queue.js');
  return ((await import(pathToFileURL(file).href)) as { default: <T>(initial?: T[]) => Queue<T> }).default;
}

/** Runs `work`, recording the length of every array `indexOf` is called on meanwhile. */
function longestScanned(work: () => void): number {
  const indexOf = Array.prototype.indexOf;
  let longest = 0;
  Array.prototype.indexOf = function (this: unknown[], ...args: Parameters<typeof indexOf>) {
    longest = Math.max(longest, this.length);
    return indexOf.apply(this, args);
  };
  try {
    work();
  } finally {
    Array.prototype.indexOf = indexOf;
  }
  return longest;
}

describe("postgres.js's connection queue (patched)", () => {
  it('stays as long as what it holds under a load that never empties it', async () => {
    const Queue = await loadQueue();
    const busy = Queue<number>();
    const open = Queue<number>();
    for (let connection = 0; connection < 10; connection += 1) busy.push(connection);

    const longest = longestScanned(() => {
      for (let query = 0; query < 200_000; query += 1) {
        // What the pool does per query: the next busy connection runs it and goes to the back;
        // now and then one goes idle (removed from busy) and comes back.
        const connection = busy.shift() as number;
        busy.remove(connection);
        busy.push(connection);
        if (query % 7 === 0) {
          const idle = busy.remove(connection) as number;
          open.push(idle);
          busy.push(open.shift() as number);
        }
      }
    });
    expect(longest).toBeLessThan(5_000);
    expect(busy.length).toBe(10);
  });

  it('still hands items out first in, first out, and removes any of them', async () => {
    const Queue = await loadQueue();
    const queue = Queue<string>(['a', 'b']);
    for (let i = 0; i < 5_000; i += 1) queue.push(`x${i}`);
    const out: string[] = [];
    for (let i = 0; i < 3_000; i += 1) out.push(queue.shift() as string);
    expect(out.slice(0, 3)).toEqual(['a', 'b', 'x0']);
    expect(out.at(-1)).toBe('x2997');
    expect(queue.length).toBe(2_002);
    expect(queue.remove('x2998')).toBe('x2998');
    expect(queue.remove('x0')).toBeNull();
    expect(queue.shift()).toBe('x2999');
    expect(queue.length).toBe(2_000);
  });
});
