/**
 * A profile as the service reads it, and its public document: the exact JSON of the contract's
 * profile lookup (`name, description, image, attributes, records`, in that order).
 *
 * The records arrive as the stored JSON text of the `records` object, built by the database in
 * ascending key order with every value's text as stored. The document embeds that text as it
 * is, so map entries keep their stored order and the hot path parses and re-serialises nothing;
 * GraphQL reads the records on first use, split into records whose values stay text until read
 * (./stored-records.ts). A Profile is immutable, so what is derived
 * from it is computed once and kept with it, and an in-memory cache of profiles is a cache of
 * ready answers.
 */
import { codePointLength } from '../names/name-id.js';
import { ownedBuffer } from '../workers/owned-buffer.js';
import { hasArrayIndexKey, parseOrdered, type RecordValue } from './record-value.js';
import { StoredRecord, splitStoredRecords } from './stored-records.js';

/** One record as GraphQL and the other answers read it: its value (`raw`) is parsed on first use. */
export type ProfileRecord = StoredRecord;

/** The columns of a profile lookup: what the database hands the service. */
export interface ProfileRow {
  id: number;
  /** Canonical name ID. */
  name: string;
  localPart: string;
  namespace: string;
  description: string;
  image: string;
  level: number;
  /** Hash of the public content: the strong ETag. */
  contentHash: string;
  /** The contract's `records` object as JSON text: keys ascending, values as stored. */
  recordsJson: string;
}

/** GraphQL answers a profile keeps: the few selections an app asks of a profile (a card, a page). */
const MAX_ANSWERS = 3;

export class Profile {
  readonly id: number;
  readonly name: string;
  readonly localPart: string;
  readonly namespace: string;
  readonly description: string;
  readonly image: string;
  readonly level: number;
  readonly contentHash: string;
  readonly recordsJson: string;
  #records: readonly ProfileRecord[] | undefined;
  #document: Buffer | undefined;
  #keptByCache = false;
  /** GraphQL answers by selection (src/graphql/execution/profile-answers.ts). */
  #answers: Array<{ selection: string; text: string }> | undefined;

  constructor(row: ProfileRow) {
    this.id = row.id;
    this.name = row.name;
    this.localPart = row.localPart;
    this.namespace = row.namespace;
    this.description = row.description;
    this.image = row.image;
    this.level = row.level;
    this.contentHash = row.contentHash;
    this.recordsJson = row.recordsJson;
  }

  /** Characters (Unicode code points) of the canonical name: the `length` trait. */
  get length(): number {
    return codePointLength(this.name);
  }

  /** The strong ETag of the profile's public content. */
  get etag(): string {
    return `"${this.contentHash}"`;
  }

  /** Every record, in ascending key order, map entries in stored order. */
  get records(): readonly ProfileRecord[] {
    this.#records ??= parseRecords(this.recordsJson);
    return this.#records;
  }

  /** The profile lookup's JSON document, as UTF-8 bytes. */
  get document(): Buffer {
    if (this.#document === undefined) {
      const bytes = Buffer.from(this.documentText());
      this.#document = this.#keptByCache ? ownedBuffer(bytes) : bytes;
    }
    return this.#document;
  }

  /**
   * Says the profile cache keeps the profile, for long: its document gets bytes of its own
   * instead of a slice of Node's shared buffer pool. A small Buffer is a slice of a slab of
   * `Buffer.poolSize` bytes that lives as long as any slice of it; a profile kept among
   * others that were not (the cache keeps few of the profiles it sees) would keep a whole slab
   * each, many times its document (docs/decisions.md, "Profiles cached from their second
   * lookup").
   */
  markKeptByCache(): void {
    if (this.#keptByCache) return;
    this.#keptByCache = true;
    if (this.#document !== undefined) this.#document = ownedBuffer(this.#document);
  }

  /** Whether the profile cache keeps this profile (`markKeptByCache`). */
  get keptByCache(): boolean {
    return this.#keptByCache;
  }

  /** The GraphQL answer kept for `selection`, if any. */
  answerFor(selection: string): string | undefined {
    const answers = this.#answers;
    if (answers === undefined) return undefined;
    for (const answer of answers) if (answer.selection === selection) return answer.text;
    return undefined;
  }

  /**
   * Keeps the GraphQL answer `text` to `selection`, for a profile the cache keeps only, while it keeps
   * fewer than MAX_ANSWERS: the first selections asked keep theirs, and one asked after them
   * executes as before. (Displacing the least recent would make a profile asked with more
   * selections in turn write an answer on every request, and keep none.) The split records are
   * let go with a kept answer: the answers that read them are kept, and whatever else reads them
   * splits them again once. The text is kept as one string: an answer written piece by piece
   * (src/graphql/execution/answer-writer.ts) is a tree of its pieces until something flattens it.
   */
  keepAnswer(selection: string, text: string): void {
    if (!this.#keptByCache) return;
    const answers = this.#answers ?? [];
    if (answers.length >= MAX_ANSWERS || answers.some((answer) => answer.selection === selection)) return;
    this.#answers = [...answers, { selection, text: oneString(text) }];
    this.#records = undefined;
  }

  private documentText(): string {
    const name = JSON.stringify(this.name);
    return (
      `{"name":${name},"description":${JSON.stringify(this.description)},"image":${JSON.stringify(this.image)},` +
      `"attributes":[{"trait_type":"domain","value":${name}},{"trait_type":"level","value":${this.level}},` +
      `{"trait_type":"length","value":${this.length}}],"records":${this.recordsJson}}`
    );
  }
}

type StoredRecords = Record<string, { type: string; value: RecordValue }>;

/**
 * The records of a `records` object text. The text the database query builds is split without
 * parsing its values (./stored-records.ts); any other is parsed: its keys are record numbers, which
 * JavaScript orders ascending, as the contract wants, and only a map value with a key that looks
 * like a number needs the slower reading that keeps stored order.
 */
function parseRecords(json: string): ProfileRecord[] {
  return splitStoredRecords(json) ?? recordsOf(JSON.parse(json) as StoredRecords, json);
}

/**
 * The records of a parsed `records` object. `json` is its text while that parse may have moved a
 * map's numeric-looking keys first; such a map sends the whole text to the order-keeping reading.
 */
function recordsOf(stored: StoredRecords, json?: string): ProfileRecord[] {
  const records: ProfileRecord[] = [];
  for (const key in stored) {
    const record = stored[key];
    if (record === undefined) continue;
    const { type, value } = record;
    if (json !== undefined && typeof value === 'object' && hasArrayIndexKey(value)) {
      return recordsOf(parseOrdered(json) as StoredRecords);
    }
    records.push(StoredRecord.of(key, type, value));
  }
  return records;
}

/**
 * `text` built as one string. V8 keeps a string joined with `+` as a tree of its pieces until
 * something flattens it; held by a cached profile, the tree of a written GraphQL answer costs more
 * memory than its text (`npm run bench:cache-memory` measures it). JSON.parse gives back exactly the string JSON.stringify was
 * given, built anew.
 */
function oneString(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}
