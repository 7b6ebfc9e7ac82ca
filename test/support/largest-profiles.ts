/**
 * Profiles at the data file's limits (src/data/data-limits.ts), each filled with the characters
 * that make one kind of answer longest: a test imports them to prove they are accepted and
 * measures what the service answers for them.
 */
import { DATA_LIMITS } from '../../src/data/data-limits.js';
import type { ProfileObject } from '../../src/data/data-line.js';

type Records = NonNullable<ProfileObject['records']>;

/** The 4-byte letter U+1D41A MATHEMATICAL BOLD SMALL A: the longest a name's character can be in UTF-8. */
const WIDE_LETTER = '\u{1D41A}';

/** A longest namespace: 63 4-byte letters. */
export const LONGEST_NAMESPACE = WIDE_LETTER.repeat(63);

/** A longest name ID (127 characters, 4-byte letters), one per digit `variant`, in LONGEST_NAMESPACE or `namespace`. */
export function longestName(variant: number, namespace = LONGEST_NAMESPACE): string {
  return `${WIDE_LETTER.repeat(62)}${variant % 10}@${namespace}`;
}

/**
 * Records that reach every limit at once: the most records, the most map entries, the longest
 * type and string value, and exactly the most characters in all. `char` fills the text;
 * `networks` are the keys of the social entries (in spellings of their own, so that a vCard
 * still knows the network), each with a one-character handle.
 */
export function recordsAtLimits(
  char: string,
  networks: readonly string[] = ['twitter'],
  fill: 'phone' | 'website' = 'phone',
): Records {
  const social: Record<string, string> = {};
  const perNetwork = Math.ceil(DATA_LIMITS.mapEntries / networks.length);
  const keys = networks.flatMap((network) => spellings(network, perNetwork));
  for (const key of keys.slice(0, DATA_LIMITS.mapEntries)) social[key] = char;
  const records: Records = {
    '0': { type: 'social', value: social },
    '1': { type: `x${'y'.repeat(DATA_LIMITS.recordType - 1)}`, value: '' },
    '2': { type: 'name', value: char.repeat(DATA_LIMITS.stringValue) },
  };
  // The rest share what is left: phone lists of one-character numbers (a TEL line each), or
  // website URLs (a URL line each, the characters percent-encoded).
  const rest = DATA_LIMITS.records - 3;
  let left = DATA_LIMITS.recordsText - recordsCharacters(records) - rest * fill.length;
  for (let key = 3; key < DATA_LIMITS.records; key += 1) {
    const size = Math.max(0, Math.min(DATA_LIMITS.stringValue, left));
    records[String(key)] = { type: fill, value: fill === 'phone' ? phoneList(char, size) : websiteOf(char, size) };
    left -= size;
  }
  if (left !== 0) throw new Error(`the limits leave ${left} characters over`);
  return records;
}

/** Characters (code points) of the records as the limits count them: types, values, map keys and values. */
function recordsCharacters(records: Records): number {
  const length = (text: string) => [...text].length;
  let total = 0;
  for (const { type, value } of Object.values(records)) {
    total += length(type);
    if (typeof value === 'string') total += length(value);
    else for (const [key, entry] of Object.entries(value)) total += length(key) + length(entry);
  }
  return total;
}

/** An http URL of `count` characters (as many as there are, for a short `count`) ending in `char`s. */
function websiteOf(char: string, count: number): string {
  const base = 'http://w.example/';
  return count < base.length ? char.repeat(count) : `${base}${char.repeat(count - base.length)}`;
}

/** `count` characters of one-character numbers separated by commas: `a,a,a…`. */
function phoneList(char: string, count: number): string {
  return Array.from({ length: count }, (_, index) => (index % 2 === 0 ? char : ',')).join('');
}

/** `count` distinct spellings of `word` (see spelling). */
function spellings(word: string, count: number): string[] {
  const found = new Set<string>();
  for (let variant = 0; found.size < count; variant += 1) found.add(spelling(word, variant));
  return [...found];
}

/** The `variant`-th spelling of `word` by letter case (twitter, Twitter, tWitter, …), then with digits. */
function spelling(word: string, variant: number): string {
  const letters = [...word];
  const cased = letters.map((letter, index) => ((variant >> index) & 1 ? letter.toUpperCase() : letter)).join('');
  const round = variant >> letters.length;
  return round === 0 ? cased : `${cased}${round}`;
}
