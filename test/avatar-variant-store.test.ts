/**
 * The avatar variant store (src/avatars/variant-store.ts) bounded by what it takes: in memory by
 * bytes counted with each entry's key and an allowance for its objects; on disk by the blocks the
 * file system allocates, by a number of files, and so by the memory of its index
 * (src/avatars/variant-index.ts), least recently used first, also for what an earlier run left.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statfsSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HASH_BYTES, indexBytes, MAX_INDEX_BYTES, VariantIndex } from '../src/avatars/variant-index.js';
import {
  MEMORY_ENTRY_OVERHEAD_BYTES,
  VariantStore,
  type VariantStoreOptions,
  variantOf,
} from '../src/avatars/variant-store.js';
import { DEFAULT_VARIANT_FILES, MAX_VARIANT_FILES } from '../src/config/config.js';
import { captureLog } from './support/log-capture.js';

const MiB = 1024 * 1024;

describe('the variant store on disk', () => {
  let directory: string;
  /** The file system's block: what a file of a few bytes takes at least. */
  let block: number;
  beforeEach(() => {
    directory = mkdtempSync(path.join(os.tmpdir(), 'nps-variants-'));
    block = statfsSync(directory).bsize;
  });
  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  /** A store on `directory` whose memory holds nothing, so every `get` reads the disk. */
  const diskStore = (options: Partial<VariantStoreOptions>) =>
    new VariantStore({
      memoryBytes: 1,
      directory,
      diskBytes: 1024 * MiB,
      diskFiles: 1000,
      logger: captureLog().logger,
      ...options,
    });
  /** A tiny variant (64 bytes, as small as a resized avatar gets), different for each `i`. */
  const tiny = (i: number) => variantOf(Buffer.alloc(64, i % 251), 'webp');
  const variantFiles = () => readdirSync(directory).filter((name) => /^[\w-]{43}\.(webp|png|jpg)$/.test(name));
  /** What the files take on disk, as the file system allocated it. */
  const allocated = () =>
    variantFiles().reduce((sum, name) => sum + statSync(path.join(directory, name)).blocks * 512, 0);

  it('keeps tiny variants within the blocks the files take, not only their bytes', async () => {
    const diskBytes = 30 * block;
    const store = diskStore({ diskBytes });
    for (let i = 0; i < 200; i++) await store.set(`key-${i}`, tiny(i));
    // 200 variants of 64 bytes are 12,800 bytes of content; each file takes a block at least.
    expect(variantFiles()).toHaveLength(30);
    expect(allocated()).toBeLessThanOrEqual(diskBytes);
    expect(store.diskUsage).toMatchObject({ files: 30, bytes: 30 * block });
    // The newest are kept.
    expect((await store.get('key-199'))?.body.equals(tiny(199).body)).toBe(true);
    expect(await store.get('key-169')).toBeUndefined();
  });

  it('keeps at most the number of files configured, and its index no larger', async () => {
    const store = diskStore({ diskFiles: 50 });
    for (let i = 0; i < 200; i++) await store.set(`key-${i}`, tiny(i));
    expect(variantFiles()).toHaveLength(50);
    const usage = store.diskUsage;
    expect(usage?.files).toBe(50);
    expect(usage?.bytes).toBeGreaterThanOrEqual(allocated());
    expect(usage?.indexBytes).toBeLessThanOrEqual(indexBytes(50));
  });

  it('removes the least recently used first: a variant read from disk stays', async () => {
    const store = diskStore({ diskFiles: 3 });
    for (const key of ['a', 'b', 'c']) await store.set(key, tiny(key.charCodeAt(0)));
    expect((await store.get('a'))?.body.equals(tiny(97).body)).toBe(true);
    await store.set('d', tiny(100));
    expect(await store.get('b')).toBeUndefined();
    for (const key of ['a', 'c', 'd']) expect(await store.get(key), key).toBeDefined();
    expect(variantFiles()).toHaveLength(3);
  });

  it('finds what an earlier run left, and trims it to smaller bounds least recently used first', async () => {
    const first = diskStore({});
    for (let i = 0; i < 10; i++) await first.set(`key-${i}`, tiny(i));
    // Each file's time is its last use: key-3 the most recent, then key-9 … key-4, key-2 … key-0.
    for (let i = 0; i < 10; i++) {
      const name = fileNameOf(`key-${i}`);
      const used = i === 3 ? 2_000_000 : 1_000_000 + i;
      utimesSync(path.join(directory, name), used, used);
    }
    // A temporary file of a process that ended while writing goes; one of a running process stays.
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(path.join(directory, `.${fileNameOf('x')}.${ended}.tmp`), 'half');
    writeFileSync(path.join(directory, `.${fileNameOf('y')}.${process.pid}.tmp`), 'being written');
    // Not a variant file of the store's: left alone.
    writeFileSync(path.join(directory, 'README'), 'notes');

    const again = diskStore({ diskFiles: 4 });
    expect((await again.get('key-3'))?.body.equals(tiny(3).body)).toBe(true);
    expect(variantFiles().sort()).toEqual(['key-3', 'key-7', 'key-8', 'key-9'].map(fileNameOf).sort());
    expect(again.diskUsage?.files).toBe(4);
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([
      `.${fileNameOf('y')}.${process.pid}.tmp`,
    ]);
    expect(readdirSync(directory)).toContain('README');

    // And by blocks: two blocks' worth keeps the two most recently used.
    const smaller = diskStore({ diskBytes: 2 * block });
    expect(await smaller.get('key-9')).toBeDefined();
    expect(variantFiles().sort()).toEqual(['key-3', 'key-9'].map(fileNameOf).sort());
  });

  it('answers a variant whose file is gone as not stored, and forgets it', async () => {
    const store = diskStore({});
    await store.set('gone', tiny(1));
    rmSync(path.join(directory, fileNameOf('gone')));
    expect(await store.get('gone')).toBeUndefined();
    expect(store.diskUsage?.files).toBe(0);
  });
});

/** The file of key `key` (the store's naming: its SHA-256 in base64url; tiny() is WebP). */
function fileNameOf(key: string): string {
  return `${createHash('sha256').update(key).digest('base64url')}.webp`;
}

describe('the index of the variant files', () => {
  it('takes at most 32 MiB at its bound: for the default 200,000 files, and for the most allowed', () => {
    const index = new VariantIndex(DEFAULT_VARIANT_FILES);
    const hashes = randomBytes(DEFAULT_VARIANT_FILES * HASH_BYTES);
    const hashAt = (i: number) => hashes.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES);
    for (let i = 0; i < DEFAULT_VARIANT_FILES; i++) index.add(hashAt(i), i % 3, 4096);
    expect(index.size).toBe(DEFAULT_VARIANT_FILES);
    expect(index.bytes).toBe(DEFAULT_VARIANT_FILES * 4096);
    // The typed arrays are all it holds per entry: their bytes are its memory.
    expect(index.memoryBytes).toBe(indexBytes(DEFAULT_VARIANT_FILES));
    expect(index.memoryBytes).toBeLessThanOrEqual(MAX_INDEX_BYTES);
    expect(indexBytes(MAX_VARIANT_FILES)).toBeLessThanOrEqual(MAX_INDEX_BYTES);
    // Full: one more needs the oldest out first.
    expect(() => index.add(randomBytes(HASH_BYTES), 0, 4096)).toThrow(/full/);
    for (const i of [0, 1, 99_999, DEFAULT_VARIANT_FILES - 1]) expect(index.find(hashAt(i))).toBeGreaterThanOrEqual(0);
    expect(index.find(randomBytes(HASH_BYTES))).toBe(-1);
  });

  it('finds, orders and removes entries as a Map in insertion order would, through many changes', () => {
    const limit = 1000;
    const index = new VariantIndex(limit);
    /** The model: hash (hex) → format, oldest first. */
    const model = new Map<string, number>();
    let seed = 7;
    let evictions = 0;
    /** mulberry32: the same sequence every run. */
    const random = (below: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % below;
    };
    // Spread over the table as SHA-256 would be, but every seventh in the last bucket (the table's
    // end: probing wraps around), so probing past others and removal in a run are exercised.
    const hashOf = (n: number) => {
      const hash = Buffer.alloc(HASH_BYTES);
      hash.writeUInt32LE(n % 7 === 0 ? 0xffffffff : Math.imul(n, 2_654_435_761) >>> 0, 0);
      hash.writeUInt32LE(n, 4);
      return hash;
    };
    for (let step = 0; step < 40_000; step++) {
      const n = random(6000);
      const hash = hashOf(n);
      const key = hash.toString('hex');
      const slot = index.find(hash);
      expect(slot >= 0, `step ${step}`).toBe(model.has(key));
      const action = random(3);
      if (slot >= 0 && action === 0) {
        index.remove(slot);
        model.delete(key);
      } else if (slot >= 0 && action === 1) {
        index.touch(slot);
        const format = model.get(key) ?? 0;
        model.delete(key);
        model.set(key, format);
      } else if (slot < 0) {
        if (index.size === limit) {
          evictions += 1;
          const oldest = index.oldest();
          expect(Buffer.from(oldest?.hash ?? []).toString('hex')).toBe(model.keys().next().value);
          index.remove(index.find(oldest?.hash ?? new Uint8Array(0)));
          model.delete(model.keys().next().value ?? '');
        }
        index.add(hash, n % 3, 512 * (1 + (n % 5)));
        model.set(key, n % 3);
      }
    }
    expect(evictions).toBeGreaterThan(100);
    expect(index.size).toBe(model.size);
    for (const [key, format] of model) expect(index.formatAt(index.find(Buffer.from(key, 'hex')))).toBe(format);
    // Oldest first, as the model.
    const order: string[] = [];
    for (let entry = index.oldest(); entry !== undefined; entry = index.oldest()) {
      order.push(Buffer.from(entry.hash).toString('hex'));
      index.remove(index.find(entry.hash));
    }
    expect(order).toEqual([...model.keys()]);
    expect(index.bytes).toBe(0);
  });
});

describe('the variant store in memory', () => {
  it('counts each entry with its key and an allowance for its objects, so tiny variants cannot pile up', async () => {
    const memoryBytes = 32 * MiB;
    const store = new VariantStore({ memoryBytes, diskBytes: 0, diskFiles: 1, logger: captureLog().logger });
    const url = `https://images.example.org/${'a'.repeat(60)}.jpg`;
    for (let i = 0; i < 100_000; i++)
      await store.set(VariantStore.key([1, url, i, 'webp']), variantOf(Buffer.alloc(64), 'webp'));
    // The 64-byte variants alone would be 6.4 MB, within the bound; counted as what they take, far fewer fit.
    expect(store.memoryBytes).toBeLessThanOrEqual(memoryBytes);
    expect(store.memoryEntries).toBeLessThanOrEqual(memoryBytes / MEMORY_ENTRY_OVERHEAD_BYTES);
    expect(store.memoryEntries).toBeLessThan(100_000);
    // The most recent are the ones kept.
    expect(store.held(VariantStore.key([1, url, 99_999, 'webp']))).toBeDefined();
    expect(store.held(VariantStore.key([1, url, 0, 'webp']))).toBeUndefined();
  });

  it('counts what a variant holds: the whole buffer of a view', () => {
    const store = new VariantStore({ memoryBytes: 10 * MiB, diskBytes: 0, diskFiles: 1, logger: captureLog().logger });
    const large = Buffer.alloc(MiB);
    void store.set('view', variantOf(large.subarray(0, 64), 'png'));
    expect(store.memoryBytes).toBeGreaterThanOrEqual(MiB);
  });
});
