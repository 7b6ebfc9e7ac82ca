/**
 * Synthetic data in the import format, for tests, load tests and benchmarks: deterministic (the
 * same options give the same bytes), realistic (every record type, varied sizes, several
 * namespaces, empty fields, non-ASCII names and text) and streaming (any number of profiles in
 * constant memory).
 *
 * Profile `i` is generated from its own seed (see itemSeed), so `generatedName(options, i)` gives
 * any profile's name without generating the others: a benchmark can pick random existing names.
 * Names are unique because the local part ends in the decimal index and the words before it
 * contain no digits.
 */
import type { DataObject, NamespaceObject, ProfileObject } from './data-line.js';
import { chance, itemSeed, mulberry32, pick, type Random, randomInt } from './prng.js';

export interface GeneratorOptions {
  profiles: number;
  seed: number;
  /** Number of namespaces, at least 1. */
  namespaces?: number;
}

export const DEFAULT_NAMESPACES = 8;

const NAMESPACE_NAMES = [
  'me',
  'dev',
  'art',
  'club',
  'studio',
  'мир',
  'music',
  'ニュース',
  'shop',
  'team',
  'café',
  'dao',
];

const FIRST_NAMES = [
  'anna',
  'ben',
  'carla',
  'david',
  'emma',
  'felix',
  'grace',
  'hugo',
  'ivy',
  'jack',
  'kim',
  'liam',
  'mia',
  'noah',
  'olivia',
  'paul',
  'quinn',
  'rosa',
  'sam',
  'tara',
  'umar',
  'vera',
  'will',
  'xena',
  'yusuf',
  'zoe',
];
/** About one name in ten: accented Latin, Cyrillic, Greek, Japanese. */
const NON_ASCII_FIRST_NAMES = [
  'josé',
  'zoë',
  'søren',
  'łukasz',
  'françois',
  'иван',
  'ольга',
  'δημήτρης',
  'さくら',
  'たろう',
  'müller',
];
const LAST_NAMES = [
  'smith',
  'garcia',
  'kowalski',
  'nguyen',
  'okafor',
  'rossi',
  'schmidt',
  'tanaka',
  'dubois',
  'silva',
  'khan',
];
const SEPARATORS = ['.', '_', '-', ''];
const WORDS = [
  'builder',
  'designer',
  'coffee',
  'open',
  'source',
  'music',
  'travel',
  'photos',
  'code',
  'art',
  'writer',
  'maker',
  'runner',
  'gardening',
  'crypto',
  'community',
  'founder',
  'teacher',
  'books',
  'film',
  'games',
];
const NON_ASCII_PHRASES = [
  'Привет, мир!',
  'こんにちは。',
  'Café crème à Zürich',
  'Ελληνικά γράμματα',
  'naïve façade',
  'Łódź ✈ Kraków',
];
const SOCIAL_KEYS = ['twitter', 'discord', 'instagram', 'tiktok', 'youtube', 'facebook', 'linkedin', 'telegram'];
const LINK_LABELS = ['Blog', 'Shop', 'Portfolio', 'Podcast', 'Newsletter', 'Talks', 'GitHub'];
const NOTE_LABELS = ['Hours', 'Address', 'Bio', 'Languages', 'Motto', 'Öffnungszeiten'];
const IMAGE_LABELS = ['cover', 'banner', 'gallery1', 'gallery2', 'logo'];
const EMAIL_DOMAINS = ['example.com', 'example.org', 'example.net'];
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const HEX = '0123456789abcdef';

function namespaceCount(options: GeneratorOptions): number {
  return Math.max(1, options.namespaces ?? DEFAULT_NAMESPACES);
}

function generatedNamespaceName(index: number): string {
  return NAMESPACE_NAMES[index] ?? `ns${index}`;
}

function generatedNamespaces(options: GeneratorOptions): NamespaceObject[] {
  return Array.from({ length: namespaceCount(options) }, (_, index) => ({
    kind: 'namespace',
    name: generatedNamespaceName(index),
    ownerEmail: `owner${index}@${EMAIL_DOMAINS[index % EMAIL_DOMAINS.length]}`,
  }));
}

/** The canonical name of profile `index`. */
export function generatedName(options: GeneratorOptions, index: number): string {
  return profileName(mulberry32(itemSeed(options.seed, index)), options, index).name;
}

/** The names of all generated profiles, in file order. */
export function* generatedNames(options: GeneratorOptions): Generator<string> {
  for (let index = 0; index < options.profiles; index += 1) yield generatedName(options, index);
}

export function generatedProfile(options: GeneratorOptions, index: number): ProfileObject {
  const random = mulberry32(itemSeed(options.seed, index));
  // The name comes first from the profile's sequence, so generatedName draws the same numbers.
  const { name, first } = profileName(random, options, index);
  const profile: ProfileObject = {
    kind: 'profile',
    name,
    creatorEmail: creatorEmail(random, index),
    description: description(random),
    image: chance(random, 0.7) ? `https://img.example.org/avatars/${index}.jpg` : '',
    level: Math.floor(random() * random() * 10),
  };
  // Some lines leave the optional fields out, as hand-written files do.
  if (profile.description === '' && chance(random, 0.5)) delete profile.description;
  if (chance(random, 0.05)) return profile;
  profile.records = records(random, first, index);
  return profile;
}

/** Namespaces first, then the profiles. */
export function* generateDataObjects(options: GeneratorOptions): Generator<DataObject> {
  yield* generatedNamespaces(options);
  for (let index = 0; index < options.profiles; index += 1) yield generatedProfile(options, index);
}

/** NDJSON text in chunks of `linesPerChunk` lines, for streaming to a file or stdout. */
export function* generateNdjson(options: GeneratorOptions, linesPerChunk = 1000): Generator<string> {
  let chunk = '';
  let lines = 0;
  for (const object of generateDataObjects(options)) {
    chunk += `${JSON.stringify(object)}\n`;
    lines += 1;
    if (lines === linesPerChunk) {
      yield chunk;
      chunk = '';
      lines = 0;
    }
  }
  if (chunk !== '') yield chunk;
}

function profileName(random: Random, options: GeneratorOptions, index: number): { name: string; first: string } {
  const first = chance(random, 0.1) ? pick(random, NON_ASCII_FIRST_NAMES) : pick(random, FIRST_NAMES);
  const last = chance(random, 0.6) ? pick(random, LAST_NAMES) : '';
  const separator = last === '' ? '' : pick(random, SEPARATORS);
  // Squaring skews towards the first namespaces: a few big ones and a tail of small ones.
  const namespace = generatedNamespaceName(Math.floor(random() * random() * namespaceCount(options)));
  return { name: `${first}${separator}${last}${index}@${namespace}`, first };
}

function creatorEmail(random: Random, index: number): string {
  const domain = pick(random, EMAIL_DOMAINS);
  // Mixed case now and then: e-mails are stored as given and compared case-insensitively.
  return chance(random, 0.1) ? `User.${index}@${domain.toUpperCase()}` : `user.${index}@${domain}`;
}

function description(random: Random): string {
  if (chance(random, 0.15)) return '';
  const words = Array.from({ length: randomInt(random, 2, 40) }, () => pick(random, WORDS));
  if (chance(random, 0.1)) words.splice(randomInt(random, 0, words.length), 0, pick(random, NON_ASCII_PHRASES));
  return `${capitalised(words.join(' '))}.`;
}

function capitalised(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

type GeneratedRecords = NonNullable<ProfileObject['records']>;

function records(random: Random, first: string, index: number): GeneratedRecords {
  const result: GeneratedRecords = {};
  const handle = `${first}${index}`;
  const text = (value: string, probability: number) =>
    chance(random, 0.1) ? '' : chance(random, probability) ? value : null;
  const add = (key: number, type: string, value: string | Record<string, string> | null) => {
    if (value !== null) result[String(key)] = { type, value };
  };
  add(1, 'name', text(`${capitalised(first)} ${capitalised(pick(random, LAST_NAMES))}`, 0.9));
  add(2, 'email', text(`hello.${index}@example.net`, 0.5));
  add(3, 'website', text(`https://${index}.sites.example.org`, 0.4));
  add(4, 'phone', text(phones(random), 0.4));
  add(5, 'tg_bot', text(`@bot_${index}`, 0.2));
  add(6, 'social', chance(random, 0.6) ? stringMap(random, SOCIAL_KEYS, 0, 5, (key) => `${handle}_${key}`) : null);
  add(
    7,
    'link',
    chance(random, 0.4)
      ? stringMap(random, LINK_LABELS, 0, 4, (label) => `https://${index}.example.org/${label.toLowerCase()}`)
      : null,
  );
  add(8, 'crypto', chance(random, 0.3) ? cryptoWallets(random) : null);
  add(
    9,
    'notes',
    chance(random, 0.3)
      ? stringMap(random, NOTE_LABELS, 1, 3, () => pick(random, NON_ASCII_PHRASES.concat(WORDS)))
      : null,
  );
  add(
    20,
    'img',
    chance(random, 0.25)
      ? stringMap(random, IMAGE_LABELS, 1, 3, (label) => `https://img.example.org/${index}/${label}.png`)
      : null,
  );
  add(50, 'web_url', text(`https://profiles.example.org/${index}`, 0.8));
  add(51, 'web3_url', text(`https://web3.example.org/${index}`, 0.2));
  // Record types are stored data; a few profiles carry types the specification does not list.
  if (chance(random, 0.02)) add(randomInt(random, 100, 120), 'pgp_key', randomString(random, HEX, 40));
  return result;
}

function phones(random: Random): string {
  return Array.from({ length: randomInt(random, 1, 3) }, () => `+1555${randomString(random, '0123456789', 7)}`).join(
    ',',
  );
}

function cryptoWallets(random: Random): Record<string, string> {
  const wallets: Record<string, string> = {};
  if (chance(random, 0.7)) wallets.btc = `bc1q${randomString(random, '023456789acdefghjklmnpqrstuvwxyz', 38)}`;
  if (chance(random, 0.7)) wallets.eth = `0x${randomString(random, HEX, 40)}`;
  if (chance(random, 0.4)) wallets.sol = randomString(random, BASE58, 44);
  return wallets;
}

/** An object of `min` to `max` distinct keys from `keys`, in random order. */
function stringMap(
  random: Random,
  keys: readonly string[],
  min: number,
  max: number,
  valueFor: (key: string) => string,
): Record<string, string> {
  const remaining = [...keys];
  const result: Record<string, string> = {};
  for (let count = randomInt(random, min, Math.min(max, keys.length)); count > 0; count -= 1) {
    const [key] = remaining.splice(Math.floor(random() * remaining.length), 1);
    if (key !== undefined) result[key] = valueFor(key);
  }
  return result;
}

function randomString(random: Random, alphabet: string, length: number): string {
  let result = '';
  for (let i = 0; i < length; i += 1) result += alphabet.charAt(Math.floor(random() * alphabet.length));
  return result;
}
