/**
 * Resized avatars kept so the same variant is neither fetched nor resized again: in memory,
 * bounded in bytes (least recently used go first), and, when a directory is given (under
 * DATA_DIR), on disk. A key's hash is its file name; a file is written under a temporary name
 * and renamed, so a reader never sees half a variant.
 *
 * Both layers are bounded by what they take, not only by the bytes of the variants, which are
 * small (a 64×64 WebP is a few hundred bytes): in memory each entry is counted with an allowance
 * for its objects besides the bytes; on disk by the space the file system allocates (whole
 * blocks), by a number of files, and so by the memory of the index of those files
 * (./variant-index.ts). Beyond any bound the least recently used go first, also among the files
 * an earlier run left.
 */
import { createHash } from 'node:crypto';
import { mkdir, opendir, readFile, rename, rm, stat, statfs, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../logging/logger.js';
import type { OutputFormat } from './image-resize.js';
import { HASH_BYTES, VariantIndex } from './variant-index.js';

export interface Variant {
  readonly body: Buffer;
  readonly format: OutputFormat;
  /** A strong validator of exactly these bytes. */
  readonly etag: string;
}

export function variantOf(body: Buffer, format: OutputFormat): Variant {
  return { body, format, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

export interface VariantStoreOptions {
  memoryBytes: number;
  /** Directory of the disk layer; undefined: memory only. */
  directory?: string;
  /** Disk space the files may take, as the file system allocates it (whole blocks). */
  diskBytes: number;
  /** Files on disk at most (AVATAR_VARIANT_CACHE_FILES). */
  diskFiles: number;
  logger: Logger;
}

/**
 * What an entry of the memory layer is counted for besides its bytes and its key: an allowance
 * at least what its objects take of the process's resident memory (the variant, its Buffer and
 * ArrayBuffer with their parts outside V8's heap, the ETag string, the cache's slots), so tiny
 * variants cannot pile up in numbers the byte bound does not see.
 */
export const MEMORY_ENTRY_OVERHEAD_BYTES = 1536;

const FORMATS: readonly OutputFormat[] = ['webp', 'png', 'jpeg'];
const EXTENSIONS: Readonly<Record<OutputFormat, string>> = { webp: 'webp', png: 'png', jpeg: 'jpg' };
/** `<43 base64url characters of the key's SHA-256>.<extension>` */
const FILE_NAME = /^([A-Za-z0-9_-]{43})\.(webp|png|jpg)$/;
/** `.<file name>.<pid>.tmp`: a file being written, or left by a process that ended while writing. */
const TEMPORARY_NAME = /^\..+\.(\d+)\.tmp$/;
/** Files removed at once at start (a directory far beyond the bounds is emptied in batches). */
const REMOVALS_AT_ONCE = 256;
/** What a file system without a block size of its own is taken to allocate. */
const DEFAULT_BLOCK_BYTES = 4096;

export class VariantStore {
  private readonly memory: LRUCache<string, Variant>;
  private readonly disk: DiskVariants | undefined;

  constructor(options: VariantStoreOptions) {
    this.memory = new LRUCache<string, Variant>({
      maxSize: options.memoryBytes,
      sizeCalculation: (variant, key) => memoryBytesOf(variant, key),
    });
    this.disk =
      options.directory === undefined
        ? undefined
        : new DiskVariants(options.directory, options.diskBytes, options.diskFiles, options.logger);
  }

  /** The key of a variant: its parts as they are (hashed only for a file name: hits cost no hash). */
  static key(parts: readonly (string | number)[]): string {
    return parts.join('\n');
  }

  /** The variant when it is in memory (the disk is not read). */
  held(key: string): Variant | undefined {
    return this.memory.get(key);
  }

  async get(key: string): Promise<Variant | undefined> {
    const held = this.memory.get(key);
    if (held !== undefined || this.disk === undefined) return held;
    const stored = await this.disk.get(fileKey(key));
    if (stored !== undefined) this.memory.set(key, stored);
    return stored;
  }

  async set(key: string, variant: Variant): Promise<void> {
    this.memory.set(key, variant);
    await this.disk?.set(fileKey(key), variant);
  }

  /** Bytes the memory layer counts (variants' bytes, keys and the allowance per entry). */
  get memoryBytes(): number {
    return this.memory.calculatedSize;
  }

  /** Variants in memory. */
  get memoryEntries(): number {
    return this.memory.size;
  }

  /** The disk layer's figures (undefined without one, or before its first use). */
  get diskUsage(): DiskUsage | undefined {
    return this.disk?.usage;
  }
}

export interface DiskUsage {
  files: number;
  /** Disk space of the files, as allocated. */
  bytes: number;
  /** Memory of the index of the files. */
  indexBytes: number;
}

/** A variant's bytes as held (a view holds its whole buffer), its key (two bytes a character at most) and the allowance. */
function memoryBytesOf(variant: Variant, key: string): number {
  return variant.body.buffer.byteLength + key.length * 2 + MEMORY_ENTRY_OVERHEAD_BYTES;
}

function fileKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

function fileName(hash: Uint8Array, format: number): string {
  const extension = EXTENSIONS[FORMATS[format] ?? 'webp'];
  return `${Buffer.from(hash.buffer, hash.byteOffset, HASH_BYTES).toString('base64url')}.${extension}`;
}

/** The disk layer: one file per variant, the least recently used removed beyond its bounds. */
class DiskVariants {
  private index: VariantIndex | undefined;
  private loading: Promise<VariantIndex> | undefined;
  private blockBytes = DEFAULT_BLOCK_BYTES;

  constructor(
    private readonly directory: string,
    private readonly maxBytes: number,
    private readonly maxFiles: number,
    private readonly logger: Logger,
  ) {}

  get usage(): DiskUsage | undefined {
    const index = this.index;
    return index === undefined ? undefined : { files: index.size, bytes: index.bytes, indexBytes: index.memoryBytes };
  }

  async get(hash: Uint8Array): Promise<Variant | undefined> {
    const index = await this.loaded();
    const slot = index.find(hash);
    if (slot < 0) return undefined;
    index.touch(slot);
    const format = index.formatAt(slot);
    const file = path.join(this.directory, fileName(hash, format));
    let body: Buffer;
    try {
      body = await readFile(file);
    } catch {
      // Gone meanwhile (removed beyond a bound, or by someone else): not indexed any more, no file left.
      this.forget(index, hash);
      await rm(file, { force: true });
      return undefined;
    }
    // The order survives a restart: files are ordered by their modification time when found.
    const now = new Date();
    utimes(file, now, now).catch(() => {});
    return variantOf(body, FORMATS[format] ?? 'webp');
  }

  async set(hash: Uint8Array, variant: Variant): Promise<void> {
    const index = await this.loaded();
    if (index.find(hash) >= 0) return;
    const estimate = this.allocated(variant.body.length, 0);
    if (estimate > this.maxBytes) return;
    // Room first, so the directory does not hold more than the bounds while the file is written.
    await this.removeAll(this.makeRoom(index, estimate));
    const format = FORMATS.indexOf(variant.format);
    const name = fileName(hash, format);
    const file = path.join(this.directory, name);
    const temporary = path.join(this.directory, `.${name}.${process.pid}.tmp`);
    let taken: number;
    try {
      await writeFile(temporary, variant.body);
      await rename(temporary, file);
      const info = await stat(file);
      taken = this.allocated(info.size, info.blocks);
    } catch (error) {
      // A full or read-only disk costs a resize later, never an answer.
      this.logger.warn({ err: error, directory: this.directory }, 'avatar variant not written to disk');
      await rm(temporary, { force: true });
      return;
    }
    const existing = index.find(hash);
    if (existing >= 0 || taken > this.maxBytes) {
      // Written meanwhile by another request for the same key (that one is indexed), or larger
      // on disk than the whole bound.
      if (existing < 0 || index.formatAt(existing) !== format) await rm(file, { force: true });
      return;
    }
    const removed = this.makeRoom(index, taken);
    index.add(hash, format, taken);
    await this.removeAll(removed);
  }

  /**
   * Disk space a file of `size` bytes takes: what `stat` says is allocated (`blocks` of 512
   * bytes), and at least the size rounded up to the file system's block, for file systems that
   * allocate later or keep small files elsewhere (and so report fewer blocks at first).
   */
  private allocated(size: number, blocks: number): number {
    return Math.max(blocks * 512, Math.ceil(Math.max(size, 1) / this.blockBytes) * this.blockBytes);
  }

  /** Takes the least recently used out of the index until one more file of `bytes` fits; their names. */
  private makeRoom(index: VariantIndex, bytes: number): string[] {
    const removed: string[] = [];
    while (index.size > 0 && (index.size >= this.maxFiles || index.bytes + bytes > this.maxBytes)) {
      const oldest = index.oldest();
      if (oldest === undefined) break;
      index.remove(index.find(oldest.hash));
      removed.push(fileName(oldest.hash, oldest.format));
    }
    return removed;
  }

  private async removeAll(names: readonly string[]): Promise<void> {
    await Promise.all(names.map((name) => rm(path.join(this.directory, name), { force: true })));
  }

  private forget(index: VariantIndex, hash: Uint8Array): void {
    const slot = index.find(hash);
    if (slot >= 0) index.remove(slot);
  }

  private async loaded(): Promise<VariantIndex> {
    if (this.index !== undefined) return this.index;
    this.loading ??= this.load();
    this.index = await this.loading;
    return this.index;
  }

  /**
   * What earlier runs left, least recently used first, within the bounds: beyond them the oldest
   * files are removed, as are temporary files of processes that ended while writing.
   */
  private async load(): Promise<VariantIndex> {
    await mkdir(this.directory, { recursive: true });
    const fileSystem = await statfs(this.directory).catch(() => undefined);
    if (fileSystem !== undefined && fileSystem.bsize > 0) this.blockBytes = fileSystem.bsize;
    const found = await this.find();
    const index = new VariantIndex(this.maxFiles);
    let removed: string[] = [];
    // Oldest first; each file is added as the newest, so what stays is the most recently used.
    for (const at of found.order()) {
      if (removed.length >= REMOVALS_AT_ONCE) {
        await this.removeAll(removed);
        removed = [];
      }
      const hash = found.hash(at);
      const format = found.formats[at] ?? 0;
      const bytes = found.bytes[at] ?? 0;
      const earlier = index.find(hash);
      if (earlier >= 0) {
        // One key in two formats: the older file goes.
        const entry = index.remove(earlier);
        removed.push(fileName(entry.hash, entry.format));
      }
      if (bytes > this.maxBytes) {
        removed.push(fileName(hash, format));
        continue;
      }
      removed.push(...this.makeRoom(index, bytes));
      index.add(hash, format, bytes);
    }
    await this.removeAll(removed);
    return index;
  }

  /** The variant files in the directory (typed arrays: no object per file), and stale temporary files removed. */
  private async find(): Promise<FoundFiles> {
    const found = new FoundFiles();
    for await (const entry of await opendir(this.directory)) {
      const stale = TEMPORARY_NAME.exec(entry.name);
      if (stale !== null) {
        if (!isRunning(Number(stale[1]))) await rm(path.join(this.directory, entry.name), { force: true });
        continue;
      }
      const named = FILE_NAME.exec(entry.name);
      if (named === null || !entry.isFile()) continue;
      const info = await stat(path.join(this.directory, entry.name)).catch(() => undefined);
      if (info === undefined) continue;
      const format = FORMATS.findIndex((candidate) => EXTENSIONS[candidate] === named[2]);
      found.push(
        Buffer.from(named[1] ?? '', 'base64url'),
        format,
        this.allocated(info.size, info.blocks),
        info.mtimeMs,
      );
    }
    return found;
  }
}

/** Whether process `pid` runs (its temporary files may be in the middle of being written). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Files found at start, in typed arrays that grow by doubling. */
class FoundFiles {
  hashes = new Uint8Array(64 * HASH_BYTES);
  formats = new Uint8Array(64);
  bytes = new Float64Array(64);
  modified = new Float64Array(64);
  count = 0;

  push(hash: Uint8Array, format: number, bytes: number, modified: number): void {
    if (this.count === this.formats.length) this.grow();
    this.hashes.set(hash.subarray(0, HASH_BYTES), this.count * HASH_BYTES);
    this.formats[this.count] = format;
    this.bytes[this.count] = bytes;
    this.modified[this.count] = modified;
    this.count += 1;
  }

  hash(at: number): Uint8Array {
    return this.hashes.subarray(at * HASH_BYTES, (at + 1) * HASH_BYTES);
  }

  /** The files' positions, least recently modified first. */
  order(): Uint32Array {
    const order = new Uint32Array(this.count);
    for (let at = 0; at < this.count; at++) order[at] = at;
    return order.sort((a, b) => (this.modified[a] ?? 0) - (this.modified[b] ?? 0));
  }

  private grow(): void {
    const size = this.formats.length * 2;
    const hashes = new Uint8Array(size * HASH_BYTES);
    hashes.set(this.hashes);
    this.hashes = hashes;
    const formats = new Uint8Array(size);
    formats.set(this.formats);
    this.formats = formats;
    const bytes = new Float64Array(size);
    bytes.set(this.bytes);
    this.bytes = bytes;
    const modified = new Float64Array(size);
    modified.set(this.modified);
    this.modified = modified;
  }
}
