/**
 * A small seeded pseudo-random number generator (mulberry32): the same seed gives the same
 * sequence on every machine and Node version, which Math.random cannot promise.
 */

export type Random = () => number;

/** Numbers in [0, 1) from a 32-bit seed. */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A seed for item `index` of a stream seeded with `seed` (murmur3's finaliser over both), so
 * any item can be generated on its own, without generating the items before it.
 */
export function itemSeed(seed: number, index: number): number {
  let h =
    (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index >>> 0, 0x85ebca6b) ^ Math.floor(index / 4_294_967_296)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export function randomInt(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new RangeError('pick needs at least one item');
  return item;
}

export function chance(random: Random, probability: number): boolean {
  return random() < probability;
}
