/**
 * One line of a data file (the contract's "Data files" section): parsing and validating it on the
 * way in, and writing it on the way out. A line is a namespace
 *
 *     {"kind":"namespace","name":"me","ownerEmail":"owner@example.com"}
 *
 * or a profile
 *
 *     {"kind":"profile","name":"demo@me","creatorEmail":"maker@example.com","description":"...",
 *      "image":"","level":2,"records":{"1":{"type":"name","value":"Demo Person"}}}
 *
 * or a removal of a profile or of a namespace (with its profiles)
 *
 *     {"kind":"remove","name":"demo@me"}
 *     {"kind":"remove","namespace":"me"}
 *
 * Decisions beyond the contract:
 * - Fields the format does not define are rejected (a typo such as "desciption" would otherwise
 *   drop data silently). `description`, `image`, `level` and `records` may be absent or null.
 * - Names are stored in canonical form (NFC, lower case); e-mails are stored as given after
 *   trimming, and compared case-insensitively elsewhere.
 * - Record keys are canonical non-negative integers (no sign, no leading zeros) up to 2^31-1.
 * - Every text has a maximum length, and the records of a profile together too (data-limits.ts),
 *   so that no profile makes an answer about it expensive; and every text must be storable
 *   (storable-text.ts).
 * - A reason never repeats an e-mail address: those are private.
 */
import type { RecordValue } from '../db/schema.js';
import { isValidEmail, MAX_EMAIL_LENGTH } from '../names/email.js';
import { canonicalName, codePointLength, isValidNamePart, parseNameId, parseNamespace } from '../names/name-id.js';
import { recordValueProblem } from '../profiles/record-types.js';
import { hasArrayIndexKey, parseOrdered } from '../profiles/record-value.js';
import { DATA_LIMITS } from './data-limits.js';
import { characterCount, isSimpleText, unstorableTextProblem } from './storable-text.js';

export interface NamespaceLine {
  kind: 'namespace';
  /** Canonical top-level name. */
  name: string;
  ownerEmail: string;
}

export interface DataRecord {
  key: number;
  type: string;
  value: RecordValue;
}

export interface ProfileLine {
  kind: 'profile';
  /** Canonical name ID. */
  name: string;
  localPart: string;
  namespace: string;
  creatorEmail: string;
  description: string;
  image: string;
  level: number;
  /** In ascending key order. */
  records: DataRecord[];
}

/** Removes a profile (`what: 'profile'`, a canonical name ID) or a namespace with its profiles. */
export interface RemoveLine {
  kind: 'remove';
  what: 'profile' | 'namespace';
  /** Canonical name ID or top-level name. */
  name: string;
}

/** What a database holds, and so what an export writes. */
export type ContentLine = NamespaceLine | ProfileLine;

type DataLine = ContentLine | RemoveLine;

/** The JSON object of a line as it appears in a file. */
export interface NamespaceObject {
  kind: 'namespace';
  name: string;
  ownerEmail: string;
}

export interface ProfileObject {
  kind: 'profile';
  name: string;
  creatorEmail: string;
  description?: string;
  image?: string;
  level?: number;
  records?: Record<string, { type: string; value: RecordValue }>;
}

export type DataObject = NamespaceObject | ProfileObject;

/**
 * A failed line still names the namespace it declares when that name itself is valid, so the
 * importer can treat it as declared and not report every profile under it a second time.
 */
export type LineResult = { ok: true; line: DataLine } | { ok: false; reason: string; declaresNamespace?: string };

/** The largest record key and level: both are stored in 32-bit integer columns. */
const MAX_INT32 = 2_147_483_647;

const NAMESPACE_FIELDS = new Set(['kind', 'name', 'ownerEmail']);
const PROFILE_FIELDS = new Set(['kind', 'name', 'creatorEmail', 'description', 'image', 'level', 'records']);
const REMOVE_FIELDS = new Set(['kind', 'name', 'namespace']);
const RECORD_FIELDS = new Set(['type', 'value']);
const CANONICAL_KEY = /^(?:0|[1-9][0-9]{0,9})$/;
const PART_RULE = '1 to 63 letters, digits, ".", "_" or "-", starting and ending with a letter or digit';

class InvalidLine extends Error {
  declaresNamespace: string | undefined;
}

/** Parses and validates one line of text (without its line break). */
export function parseDataLine(text: string): LineResult {
  const bytes = lineBytesOver(text, DATA_LIMITS.lineBytes);
  if (bytes !== null) {
    return {
      ok: false,
      reason: `the line is ${bytes} bytes long, at most ${DATA_LIMITS.lineBytes} (no valid profile needs that many)`,
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `invalid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  // JSON.parse lists keys like "2024" first; a map value with one is read again in file order.
  if (recordValuesMayBeReordered(parsed)) parsed = parseOrdered(text);
  return validateDataObject(parsed);
}

/** The UTF-8 length of `text` when it is over `max`, else null; measured only when it may be. */
function lineBytesOver(text: string, max: number): number | null {
  // A UTF-16 unit takes at most 3 bytes (a pair of them 4).
  if (text.length <= max / 3) return null;
  const bytes = Buffer.byteLength(text);
  return bytes > max ? bytes : null;
}

function recordValuesMayBeReordered(line: unknown): boolean {
  if (!isPlainObject(line) || !isPlainObject(line.records)) return false;
  return Object.values(line.records).some((entry) => isPlainObject(entry) && hasArrayIndexKey(entry.value));
}

/** Validates an already parsed line object (the demo data uses this too). */
export function validateDataObject(input: unknown): LineResult {
  try {
    return { ok: true, line: toDataLine(input) };
  } catch (error) {
    if (error instanceof InvalidLine) {
      return error.declaresNamespace === undefined
        ? { ok: false, reason: error.message }
        : { ok: false, reason: error.message, declaresNamespace: error.declaresNamespace };
    }
    throw error;
  }
}

/** The line object of a namespace or profile, with every field written out. */
export function toDataObject(line: ContentLine): DataObject {
  if (line.kind === 'namespace') return { kind: 'namespace', name: line.name, ownerEmail: line.ownerEmail };
  const records: NonNullable<ProfileObject['records']> = {};
  // Integer-like keys of a JavaScript object iterate in ascending numeric order, which is the
  // order the format asks for; sorting first keeps that independent of the caller.
  for (const record of [...line.records].sort((a, b) => a.key - b.key)) {
    records[String(record.key)] = { type: record.type, value: record.value };
  }
  return {
    kind: 'profile',
    name: line.name,
    creatorEmail: line.creatorEmail,
    description: line.description,
    image: line.image,
    level: line.level,
    records,
  };
}

function toDataLine(input: unknown): DataLine {
  if (!isPlainObject(input)) throw new InvalidLine(`a line must be a JSON object, got ${jsonKind(input)}`);
  const kind = input.kind;
  if (kind === 'namespace') return toNamespaceLine(input);
  if (kind === 'profile') return toProfileLine(input);
  if (kind === 'remove') return toRemoveLine(input);
  if (kind === undefined) throw new InvalidLine(`missing "kind" (expected ${KINDS})`);
  throw new InvalidLine(`unknown kind ${quote(kind)} (expected ${KINDS})`);
}

const KINDS = '"namespace", "profile" or "remove"';

/** Exactly one of `name` (a name ID) and `namespace`: a line that could mean either is refused. */
function toRemoveLine(input: Record<string, unknown>): RemoveLine {
  rejectUnknownFields(input, REMOVE_FIELDS, 'a removal');
  const hasName = input.name !== undefined && input.name !== null;
  const hasNamespace = input.namespace !== undefined && input.namespace !== null;
  if (hasName === hasNamespace) {
    throw new InvalidLine(
      hasName
        ? 'a removal names either a profile ("name") or a namespace ("namespace"), not both'
        : 'a removal needs "name" (a profile) or "namespace"',
    );
  }
  if (hasName) {
    const rawName = requiredString(input, 'name');
    const nameId = parseNameId(rawName);
    if (nameId === null) throw new InvalidLine(`invalid name ${quote(rawName)}: ${nameIdProblem(rawName)}`);
    return { kind: 'remove', what: 'profile', name: nameId.name };
  }
  const rawNamespace = requiredString(input, 'namespace');
  const namespace = parseNamespace(rawNamespace);
  if (namespace === null) throw new InvalidLine(`invalid namespace ${quote(rawNamespace)}: must be ${PART_RULE}`);
  return { kind: 'remove', what: 'namespace', name: namespace };
}

function toNamespaceLine(input: Record<string, unknown>): NamespaceLine {
  const rawName = requiredString(input, 'name');
  const name = parseNamespace(rawName);
  if (name === null) throw new InvalidLine(`invalid namespace name ${quote(rawName)}: must be ${PART_RULE}`);
  try {
    rejectUnknownFields(input, NAMESPACE_FIELDS, 'a namespace');
    return { kind: 'namespace', name, ownerEmail: email(input, 'ownerEmail') };
  } catch (error) {
    if (error instanceof InvalidLine) error.declaresNamespace = name;
    throw error;
  }
}

function toProfileLine(input: Record<string, unknown>): ProfileLine {
  rejectUnknownFields(input, PROFILE_FIELDS, 'a profile');
  const rawName = requiredString(input, 'name');
  const nameId = parseNameId(rawName);
  if (nameId === null) throw new InvalidLine(`invalid name ${quote(rawName)}: ${nameIdProblem(rawName)}`);
  return {
    kind: 'profile',
    name: nameId.name,
    localPart: nameId.local,
    namespace: nameId.domain,
    creatorEmail: email(input, 'creatorEmail'),
    description: optionalText(input, 'description', DATA_LIMITS.description),
    image: optionalText(input, 'image', DATA_LIMITS.image),
    level: level(input.level),
    records: records(input.records),
  };
}

function rejectUnknownFields(input: Record<string, unknown>, known: ReadonlySet<string>, what: string): void {
  const unknown = Object.keys(input).filter((field) => !known.has(field));
  if (unknown.length > 0) {
    throw new InvalidLine(
      `unknown field${unknown.length > 1 ? 's' : ''} ${quotedList(unknown)} for ${what} (allowed: ${[...known].join(', ')})`,
    );
  }
}

/** Some of `values`, quoted: a reason stays one readable line however many there are. */
function quotedList(values: readonly string[]): string {
  const shown = values.slice(0, 5).map((value) => quote(value));
  return values.length > shown.length
    ? `${shown.join(', ')} and ${values.length - shown.length} more`
    : shown.join(', ');
}

function requiredString(input: Record<string, unknown>, field: string): string {
  const value = input[field];
  if (value === undefined || value === null) throw new InvalidLine(`missing "${field}"`);
  if (typeof value !== 'string') throw new InvalidLine(`"${field}" must be a string, got ${jsonKind(value)}`);
  return value;
}

function optionalString(input: Record<string, unknown>, field: string): string {
  const value = input[field];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new InvalidLine(`"${field}" must be a string, got ${jsonKind(value)}`);
  return value;
}

/** An optional string field, checked by checkedText. */
function optionalText(input: Record<string, unknown>, field: string, max: number): string {
  const text = optionalString(input, field);
  checkedText(text, max, `"${field}"`);
  return text;
}

function email(input: Record<string, unknown>, field: string): string {
  const value = requiredString(input, field).trim();
  if (value === '') throw new InvalidLine(`"${field}" is empty`);
  if (value.length > MAX_EMAIL_LENGTH) {
    throw new InvalidLine(`invalid ${field}: ${value.length} characters, at most ${MAX_EMAIL_LENGTH}`);
  }
  // The address itself stays out of the message: it is private data.
  if (!isValidEmail(value)) throw new InvalidLine(`invalid ${field}: not a valid e-mail address`);
  return value;
}

function level(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_INT32) {
    throw new InvalidLine(`"level" must be an integer from 0 to ${MAX_INT32}, got ${quote(value)}`);
  }
  return value;
}

function records(value: unknown): DataRecord[] {
  if (value === undefined || value === null) return [];
  if (!isPlainObject(value)) {
    throw new InvalidLine(`"records" must be an object keyed by record number, got ${jsonKind(value)}`);
  }
  const entries = Object.entries(value);
  if (entries.length > DATA_LIMITS.records) {
    throw new InvalidLine(`"records" has ${entries.length} records, at most ${DATA_LIMITS.records}`);
  }
  const totals = new RecordTotals();
  const result = entries.map(([rawKey, entry]) => record(rawKey, entry, totals));
  totals.check();
  return result.sort((a, b) => a.key - b.key);
}

function record(rawKey: string, entry: unknown, totals: RecordTotals): DataRecord {
  if (!CANONICAL_KEY.test(rawKey) || Number(rawKey) > MAX_INT32) {
    throw new InvalidLine(
      `record key ${quote(rawKey)} is not a record number (an integer from 0 to ${MAX_INT32} without sign or leading zeros)`,
    );
  }
  const where = `record "${rawKey}"`; // the key is a canonical number by now: nothing to escape
  if (!isPlainObject(entry))
    throw new InvalidLine(`${where} must be an object {"type","value"}, got ${jsonKind(entry)}`);
  const extra = Object.keys(entry).filter((field) => !RECORD_FIELDS.has(field));
  if (extra.length > 0) {
    throw new InvalidLine(`${where} has unknown field ${quotedList(extra)} (allowed: type, value)`);
  }
  const type = entry.type;
  if (typeof type !== 'string' || type === '') {
    throw new InvalidLine(
      `${where} needs a non-empty string "type", got ${type === undefined ? 'none' : jsonKind(type)}`,
    );
  }
  totals.add(checkedText(type, DATA_LIMITS.recordType, `${where} type`));
  if (entry.value === undefined) throw new InvalidLine(`${where} has no "value"`);
  const problem = recordValueProblem(type, entry.value);
  if (problem !== null) throw new InvalidLine(`${where}: ${problem}, got ${jsonKind(entry.value)}`);
  const value = entry.value as RecordValue;
  if (typeof value === 'string') totals.add(checkedText(value, DATA_LIMITS.stringValue, `${where} value`));
  else checkMapValue(value, where, totals);
  return { key: Number(rawKey), type, value };
}

function checkMapValue(value: Readonly<Record<string, string>>, where: string, totals: RecordTotals): void {
  const entries = Object.entries(value);
  totals.addMapEntries(entries.length, where);
  const keyWhat = `${where} key`;
  const valueWhat = `${where} value under`;
  for (const [key, text] of entries) {
    totals.add(checkedText(key, DATA_LIMITS.mapKey, keyWhat, key));
    totals.add(checkedText(text, DATA_LIMITS.mapValue, valueWhat, key));
  }
}

/** What the records of one profile hold together, against the limits for all of them. */
class RecordTotals {
  private characters = 0;
  private mapEntries = 0;

  add(characters: number): void {
    this.characters += characters;
  }

  /** Checked as each record comes, so that a huge map is refused before its entries are read. */
  addMapEntries(count: number, where: string): void {
    this.mapEntries += count;
    if (this.mapEntries > DATA_LIMITS.mapEntries) {
      throw new InvalidLine(
        `${where} brings the map entries of the profile to ${this.mapEntries}, at most ${DATA_LIMITS.mapEntries} in all`,
      );
    }
  }

  check(): void {
    if (this.characters > DATA_LIMITS.recordsText) {
      throw new InvalidLine(
        `the records hold ${this.characters} characters in all (types, values, map keys and map values), at most ${DATA_LIMITS.recordsText}`,
      );
    }
  }
}

/**
 * The length of `text` in characters, when it is at most `max` characters and storable (see
 * storable-text.ts). Otherwise the reason names it `what`, followed by the map entry's `key`
 * when given (quoted only then: this runs for every text of every line).
 */
function checkedText(text: string, max: number, what: string, key?: string): number {
  if (text.length <= max && isSimpleText(text)) return text.length;
  const name = () => (key === undefined ? what : `${what} ${quote(key)}`);
  const characters = characterCount(text);
  if (characters > max) throw new InvalidLine(`${name()} is too long: ${characters} characters, at most ${max}`);
  const problem = unstorableTextProblem(text);
  if (problem !== null) throw new InvalidLine(`${name()} ${problem}`);
  return characters;
}

/**
 * Which rule of the contract a name ID breaks. Validity is decided by parseNameId alone; this
 * only explains a rejection to the person fixing the file.
 */
function nameIdProblem(input: string): string {
  const name = canonicalName(input);
  const at = name.indexOf('@');
  if (at < 0) return 'no "@" (expected <local>@<domain>)';
  if (name.indexOf('@', at + 1) >= 0) return 'more than one "@" (expected <local>@<domain>)';
  const length = codePointLength(name);
  if (length > 127) return `${length} characters, at most 127`;
  if (!isValidNamePart(name.slice(0, at))) return `the local part must be ${PART_RULE}`;
  if (!isValidNamePart(name.slice(at + 1))) return `the namespace must be ${PART_RULE}`;
  return 'expected <local>@<domain>';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${quote(value)}`;
}

/** A value as JSON, shortened: reasons stay one readable line even for huge or odd input. */
function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  if (text.length <= 80) return text;
  // By code point, so the cut never splits a surrogate pair; 77 of them fit in 154 units, so
  // only a head of a huge text is split into code points.
  return `${Array.from(text.slice(0, 160)).slice(0, 77).join('')}...`;
}
