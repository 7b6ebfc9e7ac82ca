/**
 * Which loaded profiles the profile cache takes: a name is cached from its second lookup within
 * a recent window, not its first (the "doorkeeper" of TinyLFU, Einziger and Friedman, 2017).
 *
 * Most names of a large directory are looked up now and then; a cache that keeps every name on
 * its first lookup replaces a hot entry with each of them. Under lookups spread over many names
 * (a crawler walking the directory, or the benchmark's random names) nearly every lookup then
 * costs a cache write and an eviction, and the evicted profiles, which had lived long enough to
 * move to V8's old generation, are garbage that only a full collection frees: such lookups cost
 * more CPU than with the cache off (docs/decisions.md, "Profiles cached from their second lookup"). Names seen twice are the
 * ones worth keeping.
 *
 * The window is a Bloom filter of names seen once, 8 bits per name it remembers and two probes,
 * cleared after it has remembered `window` names: it allocates nothing per lookup. A false
 * positive (a few in a hundred when full, by the filter's sizing) admits a name on its first lookup, as without the filter.
 */

const BITS_PER_NAME = 8;

/** Decides whether a loaded name is worth a cache entry. */
export interface Admission {
  admits(name: string): boolean;
}

/** Every name, on its first lookup (tests of the cache's other rules use it). */
export const ADMIT_EVERY_NAME: Admission = { admits: () => true };

export class CacheAdmission implements Admission {
  readonly #bits: Int32Array;
  readonly #mask: number;
  readonly #window: number;
  #remembered = 0;

  /** Remembers up to `window` names seen once (at least 64). */
  constructor(window: number) {
    this.#window = Math.max(64, window);
    // A power of two of bits, so that a hash picks one with a mask.
    const bits = 2 ** Math.ceil(Math.log2(this.#window * BITS_PER_NAME));
    this.#bits = new Int32Array(bits / 32);
    this.#mask = bits - 1;
  }

  /** Whether `name` was seen within the window; remembers it when it was not. */
  admits(name: string): boolean {
    // Two independent FNV-1a hashes of the name's UTF-16 code units (different offset bases and
    // primes), one for each probe.
    let first = 0x811c9dc5;
    let second = 0x050c5d1f;
    for (let i = 0; i < name.length; i += 1) {
      const code = name.charCodeAt(i);
      first = Math.imul(first ^ code, 0x01000193);
      second = Math.imul(second ^ code, 0x01000197);
    }
    first = mixed(first);
    second = mixed(second);
    if (this.#has(first) && this.#has(second)) return true;
    if (this.#remembered >= this.#window) {
      this.#bits.fill(0);
      this.#remembered = 0;
    }
    this.#set(first);
    this.#set(second);
    this.#remembered += 1;
    return false;
  }

  #has(hash: number): boolean {
    const bit = hash & this.#mask;
    return ((this.#bits[bit >>> 5] as number) & (1 << (bit & 31))) !== 0;
  }

  #set(hash: number): void {
    const bit = hash & this.#mask;
    const word = bit >>> 5;
    this.#bits[word] = (this.#bits[word] as number) | (1 << (bit & 31));
  }
}

/** Spreads every input bit over the low bits a probe uses (MurmurHash3's finaliser). */
function mixed(hash: number): number {
  let h = hash ^ (hash >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
