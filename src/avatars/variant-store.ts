/**
 * Resized avatars kept so the same variant is neither fetched nor resized again: in memory,
 * bounded in bytes (least recently used go first), and, when a directory is given (under
 * DATA_DIR), on disk, bounded in bytes too. On disk a key's hash is its file name; a file is
 * written under a temporary name and renamed, so a reader never sees half a variant.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../logging/logger.js';
import type { OutputFormat } from './image-resize.js';

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
  diskBytes: number;
  logger: Logger;
}

const EXTENSIONS: Readonly<Record<OutputFormat, string>> = { webp: 'webp', png: 'png', jpeg: 'jpg' };
const FORMAT_OF_EXTENSION = new Map(Object.entries(EXTENSIONS).map(([format, extension]) => [extension, format]));

export class VariantStore {
  private readonly memory: LRUCache<string, Variant>;
  private readonly disk: DiskVariants | undefined;

  constructor(options: VariantStoreOptions) {
    this.memory = new LRUCache<string, Variant>({
      maxSize: options.memoryBytes,
      sizeCalculation: (variant) => Math.max(variant.body.length, 1),
    });
    this.disk =
      options.directory === undefined
        ? undefined
        : new DiskVariants(options.directory, options.diskBytes, options.logger);
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

  /** Bytes held in memory. */
  get memoryBytes(): number {
    return this.memory.calculatedSize;
  }
}

function fileKey(key: string): string {
  return createHash('sha256').update(key).digest('base64url');
}

/** The disk layer: one file per variant, the oldest written removed beyond the byte bound. */
class DiskVariants {
  /** File name → size, in the order written (oldest first); read from the directory on first use. */
  private files: Map<string, number> | undefined;
  private loading: Promise<Map<string, number>> | undefined;
  private total = 0;

  constructor(
    private readonly directory: string,
    private readonly maxBytes: number,
    private readonly logger: Logger,
  ) {}

  async get(key: string): Promise<Variant | undefined> {
    const files = await this.index();
    for (const [format, extension] of Object.entries(EXTENSIONS) as Array<[OutputFormat, string]>) {
      const name = `${key}.${extension}`;
      if (!files.has(name)) continue;
      try {
        return variantOf(await readFile(path.join(this.directory, name)), format);
      } catch {
        this.forget(name);
      }
    }
    return undefined;
  }

  async set(key: string, variant: Variant): Promise<void> {
    const files = await this.index();
    const name = `${key}.${EXTENSIONS[variant.format]}`;
    if (files.has(name) || variant.body.length > this.maxBytes) return;
    const temporary = path.join(this.directory, `.${name}.${process.pid}.tmp`);
    try {
      await writeFile(temporary, variant.body);
      await rename(temporary, path.join(this.directory, name));
    } catch (error) {
      // A full or read-only disk costs a resize later, never an answer.
      this.logger.warn({ err: error, directory: this.directory }, 'avatar variant not written to disk');
      await rm(temporary, { force: true });
      return;
    }
    files.set(name, variant.body.length);
    this.total += variant.body.length;
    await this.trim(files);
  }

  private async trim(files: Map<string, number>): Promise<void> {
    for (const [name] of files) {
      if (this.total <= this.maxBytes) break;
      this.forget(name);
      await rm(path.join(this.directory, name), { force: true });
    }
  }

  private forget(name: string): void {
    const size = this.files?.get(name);
    if (size === undefined) return;
    this.files?.delete(name);
    this.total -= size;
  }

  private async index(): Promise<Map<string, number>> {
    if (this.files !== undefined) return this.files;
    this.loading ??= this.load();
    this.files = await this.loading;
    return this.files;
  }

  /** What earlier runs left, oldest first, trimmed to the bound. */
  private async load(): Promise<Map<string, number>> {
    await mkdir(this.directory, { recursive: true });
    const found: Array<{ name: string; size: number; modified: number }> = [];
    for (const name of await readdir(this.directory)) {
      const extension = name.split('.').pop() ?? '';
      if (name.startsWith('.') || !FORMAT_OF_EXTENSION.has(extension)) continue;
      const info = await stat(path.join(this.directory, name)).catch(() => undefined);
      if (info?.isFile() === true) found.push({ name, size: info.size, modified: info.mtimeMs });
    }
    found.sort((a, b) => a.modified - b.modified);
    const files = new Map(found.map(({ name, size }) => [name, size] as const));
    this.total = found.reduce((sum, { size }) => sum + size, 0);
    this.files = files;
    await this.trim(files);
    return files;
  }
}
