/**
 * Records whose values stay their stored JSON text until something reads them.
 *
 * The database hands the service each profile's records as one JSON text (src/db/queries.ts);
 * REST embeds it whole. GraphQL reads the records one by one: parsing the whole text, walking it
 * for map keys that JSON.parse reorders and making objects of every value was the largest single
 * cost of a `profiles(names:)` request of 100 names (bench/README.md). So the records text is
 * split at its value boundaries without being parsed (`splitStoredRecords`); each record keeps
 * its value's text and shape (which the record variants need), read on the way, and parses the
 * value when something reads `raw`; a string without escapes is its text between the quotes.
 * Text that does not have the layout the database query builds (whitespace, a shape the splitter
 * does not know) is parsed whole as before (src/profiles/profile.ts).
 */
import { isStringMap } from './record-types.js';
import { parseJsonKeepingOrder } from './record-value.js';

/** What a stored value is, as the record variants need to know it without parsing the value. */
export type StoredShape = 'string' | 'stringMap' | 'other';

/**
 * One record. The names are GraphQL's field names (`key`, `type`, `raw`), so compiled execution
 * reads them as properties rather than calling a resolver for each record
 * (test/graphql-schema.test.ts, "fields read per record").
 */
export class StoredRecord {
  /** The parsed value; undefined until read (no JSON value is undefined). */
  #value: unknown;

  /**
   * `key` is the record's number as the `records` object writes it (digits, e.g. `"3"`); `text`
   * its value as stored, one JSON value; `shape` what that value is.
   */
  constructor(
    readonly key: string,
    readonly type: string,
    readonly text: string,
    readonly shape: StoredShape,
  ) {}

  /** A record whose value was read already: its text is what JSON.stringify writes for it. */
  static of(key: string, type: string, value: unknown): StoredRecord {
    const record = new StoredRecord(key, type, JSON.stringify(value), shapeOf(value));
    record.#value = value;
    return record;
  }

  /** The value exactly as stored, parsed on first use; objects keep their stored key order. */
  get raw(): unknown {
    if (this.#value === undefined) {
      this.#value = this.shape === 'string' ? stringOf(this.text) : parseJsonKeepingOrder(this.text);
    }
    return this.#value;
  }

  /**
   * What `JSON.stringify(this.raw)` writes, without parsing the value, where the stored text is
   * that text; undefined where it may not be. A string or map of strings whose text has no
   * backslash has nothing `JSON.stringify` would escape otherwise (stored JSON has no raw control
   * characters, and its text is UTF-8), no whitespace (the split's layout, or `of`'s own
   * `JSON.stringify`), and a map keeps its entries in stored order (src/profiles/record-value.ts);
   * only a key written twice, which parsing keeps once, is left to the parse.
   */
  get rawText(): string | undefined {
    if (this.shape === 'other' || this.text.includes('\\')) return undefined;
    return this.shape === 'string' || !hasRepeatedKey(this.text) ? this.text : undefined;
  }

  /** Serialised as the record it is (`raw` is a getter, which JSON.stringify would leave out). */
  toJSON(): { key: string; type: string; raw: unknown } {
    return { key: this.key, type: this.type, raw: this.raw };
  }
}

/** Keys of a map compared pairwise, up to this many; a larger map counts as repeating one. */
const MAX_KEYS_COMPARED = 32;

/**
 * Whether the map of strings `text` (no backslash in it, so every quote delimits a string, keys
 * and values in turn) writes a key twice. Compared in place: no string is made per key.
 */
function hasRepeatedKey(text: string): boolean {
  let quote = text.indexOf('"');
  for (let first = true; quote !== -1; first = false) {
    const keyEnd = text.indexOf('"', quote + 1);
    if (repeatsKey(text, quote + 1, keyEnd, first)) return true;
    // Past the value's string: its opening and closing quotes.
    const valueEnd = text.indexOf('"', text.indexOf('"', keyEnd + 1) + 1);
    quote = text.indexOf('"', valueEnd + 1);
  }
  return false;
}

/** Where each key of the map being read starts and ends: reused, as every map record of an answer is read. */
const keyStarts: number[] = [];
const keyEnds: number[] = [];

/**
 * Notes the key of the map being read between `start` and `end` of `text` (the map's `first` key
 * forgets the last map's); true where it repeats an earlier key of the map, or the map has more
 * keys than are compared.
 */
function repeatsKey(text: string, start: number, end: number, first: boolean): boolean {
  if (first) {
    keyStarts.length = 0;
    keyEnds.length = 0;
  }
  for (let i = 0; i < keyStarts.length; i += 1) {
    if (sameText(text, keyStarts[i] as number, keyEnds[i] as number, start, end)) return true;
  }
  if (keyStarts.length === MAX_KEYS_COMPARED) return true;
  keyStarts.push(start);
  keyEnds.push(end);
  return false;
}

function sameText(text: string, start: number, end: number, otherStart: number, otherEnd: number): boolean {
  if (end - start !== otherEnd - otherStart) return false;
  for (let i = 0; i < end - start; i += 1) {
    if (text.charCodeAt(start + i) !== text.charCodeAt(otherStart + i)) return false;
  }
  return true;
}

function shapeOf(value: unknown): StoredShape {
  if (typeof value === 'string') return 'string';
  return isStringMap(value) ? 'stringMap' : 'other';
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const TYPE_PART = '":{"type":';
const VALUE_PART = ',"value":';

/**
 * The records of a records text as src/db/queries.ts builds it —
 * `{"<key>":{"type":<type>,"value":<value>},…}` without whitespace, keys ascending — split at
 * its value boundaries without parsing the values. Undefined for text of any other layout (the
 * caller parses it).
 */
export function splitStoredRecords(json: string): StoredRecord[] | undefined {
  const records: StoredRecord[] = [];
  if (json.charCodeAt(0) !== OPEN_BRACE) return undefined;
  if (json.length === 2 && json.charCodeAt(1) === CLOSE_BRACE) return records;
  // The first backslash at or after the record being read; -1 when there is none further on
  // (so in most profiles' text, none at all): a type without one is the text between its quotes.
  let backslash = json.indexOf('\\');
  let at = 1;
  for (;;) {
    if (json.charCodeAt(at) !== QUOTE) return undefined;
    const keyEnd = json.indexOf('"', at + 1);
    if (keyEnd < 0 || !digitsBetween(json, at + 1, keyEnd) || !json.startsWith(TYPE_PART, keyEnd)) return undefined;
    const key = json.slice(at + 1, keyEnd);
    const typeStart = keyEnd + TYPE_PART.length;
    const typeEnd = endOfString(json, typeStart);
    if (typeEnd < 0 || !json.startsWith(VALUE_PART, typeEnd)) return undefined;
    if (backslash !== -1 && backslash < typeStart) backslash = json.indexOf('\\', typeStart);
    const type =
      backslash === -1 || backslash >= typeEnd
        ? json.slice(typeStart + 1, typeEnd - 1)
        : stringOf(json.slice(typeStart, typeEnd));
    const valueStart = typeEnd + VALUE_PART.length;
    const valueEnd = storedValueEnd(json, valueStart);
    if (valueEnd < 0 || json.charCodeAt(valueEnd) !== CLOSE_BRACE) return undefined;
    records.push(new StoredRecord(key, type, json.slice(valueStart, valueEnd), shapeRead));
    at = valueEnd + 1;
    const next = json.charCodeAt(at);
    if (next === CLOSE_BRACE) return at === json.length - 1 ? records : undefined;
    if (next !== COMMA) return undefined;
    at += 1;
  }
}

/** The string a JSON string literal stands for; only one with escapes is parsed. */
function stringOf(literal: string): string {
  return literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
}

/** The index after the JSON string literal that starts at `start`, or -1. */
function endOfString(json: string, start: number): number {
  if (json.charCodeAt(start) !== QUOTE) return -1;
  let quote = json.indexOf('"', start + 1);
  while (quote > 0) {
    let backslashes = 0;
    while (json.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    quote = json.indexOf('"', quote + 1);
  }
  return -1;
}

/**
 * The shape of the value `storedValueEnd` read last. A variable rather than an object returned
 * with the end: the split runs once per record of every profile a GraphQL answer reads.
 */
let shapeRead: StoredShape = 'other';

/** The index after the stored value that starts at `start` (its shape in `shapeRead`); -1 where the layout is unknown. */
function storedValueEnd(json: string, start: number): number {
  const first = json.charCodeAt(start);
  if (first === QUOTE) {
    shapeRead = 'string';
    return endOfString(json, start);
  }
  if (first === OPEN_BRACE) return endOfObject(json, start);
  shapeRead = 'other';
  return endOfOther(json, start);
}

/** The index after the object at `start` (-1 where the layout is unknown); `shapeRead` says whether every value in it is a string. */
function endOfObject(json: string, start: number): number {
  let at = start + 1;
  shapeRead = 'stringMap';
  if (json.charCodeAt(at) === CLOSE_BRACE) return at + 1;
  for (;;) {
    const keyEnd = endOfString(json, at);
    if (keyEnd < 0 || json.charCodeAt(keyEnd) !== COLON) return -1;
    at = keyEnd + 1;
    if (json.charCodeAt(at) === QUOTE) {
      at = endOfString(json, at);
    } else {
      shapeRead = 'other';
      at = endOfOther(json, at);
    }
    if (at < 0) return -1;
    const next = json.charCodeAt(at);
    if (next === CLOSE_BRACE) return at + 1;
    if (next !== COMMA) return -1;
    at += 1;
  }
}

/**
 * The end of any other JSON value at `start` (number, literal, array or object): brackets are
 * counted and strings skipped. Whitespace, which stored values do not have, ends it unknown.
 */
function endOfOther(json: string, start: number): number {
  let depth = 0;
  let at = start;
  while (at < json.length) {
    const code = json.charCodeAt(at);
    if (code === QUOTE) {
      at = endOfString(json, at);
      if (at < 0) return -1;
      if (depth === 0) return at;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) depth += 1;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (depth === 0) return at;
      depth -= 1;
      if (depth === 0) return at + 1;
    } else if (code === COMMA && depth === 0) return at;
    else if (code <= 0x20) return -1;
    at += 1;
  }
  return -1;
}

/**
 * A part of a record an answer writes: its key, its type or its value (`raw`), as JSON text, or
 * the name of the record's GraphQL type (`__typename`), which the caller's `typename` gives.
 */
type RecordPart = 'key' | 'type' | 'raw' | 'typename';

/** One field of each record's answer object: the text before it (`{"key":`, `,"t":`) and its part. */
export interface RecordPartField {
  prefix: string;
  part: RecordPart;
}

/**
 * The JSON text of a list of objects with `fields`, one per record of a records text (the layout
 * `splitStoredRecords` reads), written straight from the stored text: the same text as writing
 * each split record's `key` and `type` with JSON.stringify and its `raw` as `rawText`, without a
 * record object or a string per part. `namer`, when given, names each record's type (a part
 * `typename` needs it), and its giving up gives up the whole. Undefined where that needs more than slicing — a backslash
 * anywhere in the text, a value that is neither a string nor a map of strings, a map that writes
 * a key twice, another layout —, and the caller writes the split records instead.
 */
export function recordsAnswerText(
  json: string,
  fields: readonly RecordPartField[],
  namer?: RecordTypeNamer,
): string | undefined {
  if (json.charCodeAt(0) !== OPEN_BRACE || json.includes('\\')) return undefined;
  if (json.length === 2 && json.charCodeAt(1) === CLOSE_BRACE) return '[]';
  let text = '[';
  let at = 1;
  for (;;) {
    if (json.charCodeAt(at) !== QUOTE) return undefined;
    const keyEnd = json.indexOf('"', at + 1);
    if (keyEnd < 0 || !digitsBetween(json, at + 1, keyEnd) || !json.startsWith(TYPE_PART, keyEnd)) return undefined;
    const typeStart = keyEnd + TYPE_PART.length;
    const typeEnd = plainStringEnd(json, typeStart);
    if (typeEnd < 0 || !json.startsWith(VALUE_PART, typeEnd)) return undefined;
    const valueStart = typeEnd + VALUE_PART.length;
    const valueEnd =
      json.charCodeAt(valueStart) === OPEN_BRACE ? plainMapEnd(json, valueStart) : plainStringEnd(json, valueStart);
    if (valueEnd < 0 || json.charCodeAt(valueEnd) !== CLOSE_BRACE) return undefined;
    const name =
      namer === undefined ? undefined : nameOf(namer, json, at, keyEnd, typeStart, typeEnd, valueStart, valueEnd);
    if (namer !== undefined && name === undefined) return undefined;
    if (at !== 1) text += ',';
    for (const { prefix, part } of fields) {
      text += prefix;
      // Without a backslash, a string's JSON text is its stored literal, quotes included.
      if (part === 'key') text += json.slice(at, keyEnd + 1);
      else if (part === 'type') text += json.slice(typeStart, typeEnd);
      else if (part === 'raw') text += json.slice(valueStart, valueEnd);
      else if (name !== undefined) text += name;
      else return undefined;
    }
    text += '}';
    at = valueEnd + 1;
    const next = json.charCodeAt(at);
    if (next === CLOSE_BRACE) return at === json.length - 1 ? `${text}]` : undefined;
    if (next !== COMMA) return undefined;
    at += 1;
  }
}

/**
 * Names each record's GraphQL type for `recordsAnswerText`, as JSON text, or undefined to give up:
 * from the record the split would give, or, where the type resolver has said it reads nothing else
 * (`RESOLVED_BY_TYPE_AND_SHAPE`), from the record's type and shape without making the record.
 */
export type RecordTypeNamer =
  | { readonly from: 'record'; name(record: StoredRecord): string | undefined }
  | { readonly from: 'typeAndShape'; name(type: string, shape: StoredShape): string | undefined };

/**
 * The extension a type resolver of records declares itself with when its answer depends on nothing
 * but the record's `type` and `shape` (the service's record variants, src/graphql/schema/types/records.ts).
 */
export const RESOLVED_BY_TYPE_AND_SHAPE = 'resolvedByTypeAndShape';

/**
 * The extension a type resolver of records declares itself with when it names, at once (no
 * promise), one of its interface's object types for every record: then an answer that does not
 * write `__typename` need not ask it, since execution would neither write nor refuse its name.
 */
export const NAMES_A_RECORD_TYPE_FOR_EVERY_RECORD = 'namesARecordTypeForEveryRecord';

/** The namer's answer for the record whose parts are at these indices of `json` (no backslash in it). */
function nameOf(
  namer: RecordTypeNamer,
  json: string,
  keyStart: number,
  keyEnd: number,
  typeStart: number,
  typeEnd: number,
  valueStart: number,
  valueEnd: number,
): string | undefined {
  const type = json.slice(typeStart + 1, typeEnd - 1);
  const shape: StoredShape = json.charCodeAt(valueStart) === OPEN_BRACE ? 'stringMap' : 'string';
  if (namer.from === 'typeAndShape') return namer.name(type, shape);
  return namer.name(new StoredRecord(json.slice(keyStart + 1, keyEnd), type, json.slice(valueStart, valueEnd), shape));
}

/** The index after the string at `start` in text without a backslash, or -1. */
function plainStringEnd(json: string, start: number): number {
  if (json.charCodeAt(start) !== QUOTE) return -1;
  const quote = json.indexOf('"', start + 1);
  return quote < 0 ? -1 : quote + 1;
}

/**
 * The index after the map of strings at `start` in text without a backslash; -1 for anything else,
 * or for a map that writes a key twice (parsing keeps one) or has more keys than are compared.
 */
function plainMapEnd(json: string, start: number): number {
  let at = start + 1;
  if (json.charCodeAt(at) === CLOSE_BRACE) return at + 1;
  for (let first = true; ; first = false) {
    const keyEnd = plainStringEnd(json, at);
    if (keyEnd < 0 || json.charCodeAt(keyEnd) !== COLON || repeatsKey(json, at, keyEnd, first)) return -1;
    at = plainStringEnd(json, keyEnd + 1);
    if (at < 0) return -1;
    const next = json.charCodeAt(at);
    if (next === CLOSE_BRACE) return at + 1;
    if (next !== COMMA) return -1;
    at += 1;
  }
}

function digitsBetween(text: string, start: number, end: number): boolean {
  if (end <= start) return false;
  for (let i = start; i < end; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}
