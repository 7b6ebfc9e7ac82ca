/**
 * Record values kept as their stored JSON text until something reads them.
 *
 * The database hands the service each profile's records as one JSON text (src/db/queries.ts);
 * REST embeds it whole. GraphQL reads the records one by one: parsing the whole text, walking it
 * for map keys that JSON.parse reorders and making an object per record was the largest single
 * cost of a `profiles(names:)` request of 100 names (bench/README.md). So the records text is
 * split at its value boundaries without being parsed (`splitStoredRecords`), and each value stays
 * its text (`StoredJson`) with its shape, which the record variants need, read on the way. A
 * value is parsed when a field reads it; a string without escapes is its text between the quotes.
 * Text that does not have the layout the database query builds (whitespace, a shape the splitter
 * does not know) is parsed whole as before (src/profiles/profile.ts).
 */
import { parseJsonKeepingOrder } from './record-value.js';

/** What a stored value is, as the record variants need to know it without parsing the value. */
export type StoredShape = 'string' | 'stringMap' | 'other';

export class StoredJson {
  #value: unknown;
  #parsed = false;

  /** `text` is one JSON value as stored; `shape` what it is. */
  constructor(
    readonly text: string,
    readonly shape: StoredShape,
  ) {}

  /** A value read already: its text is what JSON.stringify writes for it. */
  static of(value: unknown): StoredJson {
    const stored = new StoredJson(JSON.stringify(value), shapeOf(value));
    stored.#value = value;
    stored.#parsed = true;
    return stored;
  }

  /** The value, parsed on first use; objects keep their stored key order. */
  get value(): unknown {
    if (!this.#parsed) {
      // A string without escapes is its text between the quotes.
      const plain = this.shape === 'string' && !this.text.includes('\\');
      this.#value = plain ? this.text.slice(1, -1) : parseJsonKeepingOrder(this.text);
      this.#parsed = true;
    }
    return this.#value;
  }

  /** Serialised as the value it holds. */
  toJSON(): unknown {
    return this.value;
  }
}

function shapeOf(value: unknown): StoredShape {
  if (typeof value === 'string') return 'string';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'other';
  for (const key in value) if (typeof (value as Record<string, unknown>)[key] !== 'string') return 'other';
  return 'stringMap';
}

/** One record of a records text: its key, its type, and its value as stored (`raw`, as GraphQL names it). */
export interface StoredRecord {
  key: string;
  type: string;
  raw: StoredJson;
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
  let at = 1;
  for (;;) {
    if (json.charCodeAt(at) !== QUOTE) return undefined;
    const keyEnd = json.indexOf('"', at + 1);
    const key = json.slice(at + 1, keyEnd);
    if (keyEnd < 0 || !isDigits(key) || !json.startsWith(TYPE_PART, keyEnd)) return undefined;
    const typeStart = keyEnd + TYPE_PART.length;
    const typeEnd = endOfString(json, typeStart);
    if (typeEnd < 0 || !json.startsWith(VALUE_PART, typeEnd)) return undefined;
    const valueStart = typeEnd + VALUE_PART.length;
    const value = storedValueAt(json, valueStart);
    if (value === undefined || json.charCodeAt(value.end) !== CLOSE_BRACE) return undefined;
    records.push({ key, type: stringAt(json, typeStart, typeEnd), raw: value.stored });
    at = value.end + 1;
    const next = json.charCodeAt(at);
    if (next === CLOSE_BRACE) return at === json.length - 1 ? records : undefined;
    if (next !== COMMA) return undefined;
    at += 1;
  }
}

function isDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}

/** The string of the JSON string literal json[start, end); only one with escapes is parsed. */
function stringAt(json: string, start: number, end: number): string {
  const literal = json.slice(start, end);
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

/** The stored value that starts at `start` and the index after it; undefined where the layout is unknown. */
function storedValueAt(json: string, start: number): { stored: StoredJson; end: number } | undefined {
  const first = json.charCodeAt(start);
  let end: number;
  let shape: StoredShape;
  if (first === QUOTE) {
    end = endOfString(json, start);
    shape = 'string';
  } else if (first === OPEN_BRACE) {
    const object = endOfObject(json, start);
    if (object === undefined) return undefined;
    ({ end, shape } = object);
  } else {
    end = endOfOther(json, start);
    shape = 'other';
  }
  if (end < 0) return undefined;
  return { stored: new StoredJson(json.slice(start, end), shape), end };
}

/** The end of the object at `start` and whether every value in it is a string. */
function endOfObject(json: string, start: number): { end: number; shape: StoredShape } | undefined {
  let at = start + 1;
  if (json.charCodeAt(at) === CLOSE_BRACE) return { end: at + 1, shape: 'stringMap' };
  let shape: StoredShape = 'stringMap';
  for (;;) {
    const keyEnd = endOfString(json, at);
    if (keyEnd < 0 || json.charCodeAt(keyEnd) !== COLON) return undefined;
    at = keyEnd + 1;
    if (json.charCodeAt(at) === QUOTE) {
      at = endOfString(json, at);
    } else {
      shape = 'other';
      at = endOfOther(json, at);
    }
    if (at < 0) return undefined;
    const next = json.charCodeAt(at);
    if (next === CLOSE_BRACE) return { end: at + 1, shape };
    if (next !== COMMA) return undefined;
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
