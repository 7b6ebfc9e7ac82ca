/**
 * The index of the avatar variants on disk (./variant-store.ts): for each file its key hash (the
 * file name), its format and the disk space it takes, in least-recently-used order. A cache of
 * hundreds of thousands of small files must not cost an object and a string per file: the index
 * is typed arrays of a fixed number of bytes per entry (an open-addressing hash table over them,
 * and a doubly linked list for the order), so its memory at its bound is known exactly
 * (`indexBytes`) and holds no JavaScript object per file. The arrays grow by doubling up to the
 * bound, so a small cache takes little.
 */

/** Bytes of a key hash (SHA-256): the file name is its base64url. */
export const HASH_BYTES = 32;
/** What one entry takes besides its hash-table slots: hash, format, size, and the list's two links. */
const ENTRY_BYTES = HASH_BYTES + 1 + 4 + 4 + 4;
const NONE = -1;
const FIRST_CAPACITY = 1024;

/** The index's memory for `entries` entries at most: the typed arrays at that capacity. */
export function indexBytes(entries: number): number {
  return entries * ENTRY_BYTES + tableSize(entries) * Int32Array.BYTES_PER_ELEMENT;
}

/** The hash table is at most half full: a power of two at least twice the entries. */
function tableSize(entries: number): number {
  let size = 2;
  while (size < entries * 2) size *= 2;
  return size;
}

/** The memory the index may take at its bound, whatever the bound configured. */
export const MAX_INDEX_BYTES = 32 * 1024 * 1024;

/** One entry as `oldest` gives it. */
export interface IndexEntry {
  hash: Uint8Array;
  format: number;
  /** Disk space the file takes, in bytes (a multiple of 512). */
  bytes: number;
}

export class VariantIndex {
  private capacity = 0;
  private hashes = new Uint8Array(0);
  private formats = new Uint8Array(0);
  /** Disk space in 512-byte units: a file of up to 2 TB fits a Uint32. */
  private units = new Uint32Array(0);
  private newer = new Int32Array(0);
  private older = new Int32Array(0);
  /** Slot + 1 of the entry whose hash lands here, 0 when empty. */
  private table = new Int32Array(0);
  /** Slots freed by removals, reused first (linked through `newer`). */
  private freeSlots = NONE;
  private usedSlots = 0;
  private oldestSlot = NONE;
  private newestSlot = NONE;
  private entries = 0;
  private totalBytes = 0;

  /** `limit`: the most entries it will hold (the caller removes one before adding beyond it). */
  constructor(private readonly limit: number) {}

  get size(): number {
    return this.entries;
  }

  /** Disk space of every file indexed, in bytes. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Memory of the arrays as they are now. */
  get memoryBytes(): number {
    return this.capacity * ENTRY_BYTES + this.table.byteLength;
  }

  /** The slot of `hash`, or -1. */
  find(hash: Uint8Array): number {
    const mask = this.table.length - 1;
    if (mask < 0) return NONE;
    for (let position = bucketOf(hash, 0) & mask; ; position = (position + 1) & mask) {
      const entry = (this.table[position] ?? 0) - 1;
      if (entry === NONE) return NONE;
      if (this.hashEquals(entry, hash)) return entry;
    }
  }

  formatAt(slot: number): number {
    return this.formats[slot] ?? 0;
  }

  /** Adds `hash` as the newest entry; it must not be indexed already, and there must be room. */
  add(hash: Uint8Array, format: number, bytes: number): void {
    if (this.entries >= this.limit) throw new Error('the variant index is full: remove the oldest first');
    const slot = this.takeSlot();
    this.hashes.set(hash.subarray(0, HASH_BYTES), slot * HASH_BYTES);
    this.formats[slot] = format;
    this.units[slot] = Math.ceil(bytes / 512);
    this.insert(slot);
    this.link(slot);
    this.entries += 1;
    this.totalBytes += (this.units[slot] ?? 0) * 512;
  }

  /** Makes the entry at `slot` the newest. */
  touch(slot: number): void {
    if (slot === this.newestSlot) return;
    this.unlink(slot);
    this.link(slot);
  }

  /** The oldest entry, or undefined when empty. */
  oldest(): IndexEntry | undefined {
    const slot = this.oldestSlot;
    if (slot === NONE) return undefined;
    return this.entryAt(slot);
  }

  remove(slot: number): IndexEntry {
    const entry = this.entryAt(slot);
    this.unlink(slot);
    this.erase(slot);
    this.entries -= 1;
    this.totalBytes -= entry.bytes;
    this.newer[slot] = this.freeSlots;
    this.freeSlots = slot;
    return entry;
  }

  private entryAt(slot: number): IndexEntry {
    const start = slot * HASH_BYTES;
    return {
      hash: this.hashes.slice(start, start + HASH_BYTES),
      format: this.formats[slot] ?? 0,
      bytes: (this.units[slot] ?? 0) * 512,
    };
  }

  private takeSlot(): number {
    if (this.freeSlots !== NONE) {
      const slot = this.freeSlots;
      this.freeSlots = this.newer[slot] ?? NONE;
      return slot;
    }
    if (this.usedSlots === this.capacity) this.grow();
    return this.usedSlots++;
  }

  /** Doubles the arrays (up to the limit) and builds the hash table again for them. */
  private grow(): void {
    const capacity = Math.min(this.limit, Math.max(FIRST_CAPACITY, this.capacity * 2));
    const copy = <T extends Uint8Array | Uint32Array | Int32Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    this.hashes = copy(this.hashes, new Uint8Array(capacity * HASH_BYTES));
    this.formats = copy(this.formats, new Uint8Array(capacity));
    this.units = copy(this.units, new Uint32Array(capacity));
    this.newer = copy(this.newer, new Int32Array(capacity));
    this.older = copy(this.older, new Int32Array(capacity));
    this.capacity = capacity;
    this.table = new Int32Array(tableSize(capacity));
    for (let slot = this.oldestSlot; slot !== NONE; slot = this.newer[slot] ?? NONE) this.insert(slot);
  }

  private hashEquals(slot: number, hash: Uint8Array): boolean {
    const start = slot * HASH_BYTES;
    for (let i = 0; i < HASH_BYTES; i++) if (this.hashes[start + i] !== hash[i]) return false;
    return true;
  }

  private insert(slot: number): void {
    const mask = this.table.length - 1;
    let position = this.bucketAt(slot) & mask;
    while ((this.table[position] ?? 0) !== 0) position = (position + 1) & mask;
    this.table[position] = slot + 1;
  }

  /** Takes `slot` out of the table, moving back the entries after it that would no longer be found. */
  private erase(slot: number): void {
    const mask = this.table.length - 1;
    let hole = this.bucketAt(slot) & mask;
    while ((this.table[hole] ?? 0) !== slot + 1) hole = (hole + 1) & mask;
    this.table[hole] = 0;
    for (let position = (hole + 1) & mask; (this.table[position] ?? 0) !== 0; position = (position + 1) & mask) {
      const entry = (this.table[position] ?? 0) - 1;
      const home = this.bucketAt(entry) & mask;
      // The entry may stay unless the hole lies between its home bucket and where it is (cyclically).
      const stays = hole < position ? home > hole && home <= position : home > hole || home <= position;
      if (stays) continue;
      this.table[hole] = entry + 1;
      this.table[position] = 0;
      hole = position;
    }
  }

  private bucketAt(slot: number): number {
    return bucketOf(this.hashes, slot * HASH_BYTES);
  }

  private link(slot: number): void {
    this.older[slot] = this.newestSlot;
    this.newer[slot] = NONE;
    if (this.newestSlot === NONE) this.oldestSlot = slot;
    else this.newer[this.newestSlot] = slot;
    this.newestSlot = slot;
  }

  private unlink(slot: number): void {
    const older = this.older[slot] ?? NONE;
    const newer = this.newer[slot] ?? NONE;
    if (older === NONE) this.oldestSlot = newer;
    else this.newer[older] = newer;
    if (newer === NONE) this.newestSlot = older;
    else this.older[newer] = older;
  }
}

/** The first four bytes of the hash at `start`: a SHA-256 is uniform already. */
function bucketOf(bytes: Uint8Array, start: number): number {
  const byte = (offset: number) => bytes[start + offset] ?? 0;
  return (byte(0) | (byte(1) << 8) | (byte(2) << 16) | (byte(3) << 24)) >>> 0;
}
