/**
 * A profile as a vCard 4.0 (RFC 6350), for address books:
 *
 * - `FN`: the first non-empty `name` record, else the name ID; `NICKNAME`: the name ID;
 *   `NOTE`: the description; `PHOTO`: the image, when it is an http(s) URL.
 * - `EMAIL` per non-empty `email` record; `TEL` per phone number (a `phone` value is a
 *   comma-separated list): a `tel:` URI for international numbers (`+…`), text otherwise.
 * - `URL` per `website` and `web_url` record that is an http(s) URL (a vCard URL must be a URI).
 * - Social handles: `IMPP` for the messenger (`telegram`, as `https://t.me/<handle>`),
 *   `X-SOCIALPROFILE;TYPE=<network>` for the others: the profile URL where the network has a
 *   known one, else the handle as text.
 * - `SOURCE`: where the current version of this vCard is (`<PUBLIC_URL>/api/<name>/vcard`).
 *
 * Empty values are left out. Text is escaped (RFC 6350 §3.4) and lines are folded at 75 octets
 * without splitting a UTF-8 sequence (§3.2); lines end with CRLF.
 */
import { isStringMap, phoneNumbers } from './record-types.js';

/** What the vCard needs of a profile (a Profile has it). */
export interface VCardSource {
  name: string;
  description: string;
  image: string;
  records: ReadonlyArray<{ type: string; raw: unknown }>;
}

export interface VCardLinks {
  /** The vCard's own URL (SOURCE). */
  source: string;
  /** An absolute http(s) URL from stored data, serialised; null when the value is not one. */
  httpUrl(value: string): string | null;
}

/** Networks whose handle makes a profile URL; the handle goes in as one path segment. */
const PROFILE_URLS: Readonly<Record<string, (handle: string) => string>> = {
  twitter: (handle) => `https://x.com/${handle}`,
  instagram: (handle) => `https://www.instagram.com/${handle}`,
  tiktok: (handle) => `https://www.tiktok.com/@${handle}`,
  youtube: (handle) => `https://www.youtube.com/@${handle}`,
  facebook: (handle) => `https://www.facebook.com/${handle}`,
  linkedin: (handle) => `https://www.linkedin.com/in/${handle}`,
  telegram: (handle) => `https://t.me/${handle}`,
};

/** Networks that are messengers: IMPP rather than a social profile. */
const MESSENGERS = new Set(['telegram']);

export function profileVCard(profile: VCardSource, links: VCardLinks): string {
  const lines: string[] = ['BEGIN:VCARD', 'VERSION:4.0'];
  const add = (property: string, value: string) => lines.push(`${property}:${value}`);
  const stringsOf = (type: string) =>
    profile.records.flatMap((record) =>
      record.type === type && typeof record.raw === 'string' && record.raw.trim() !== '' ? [record.raw.trim()] : [],
    );

  add('FN', escapeText(stringsOf('name')[0] ?? profile.name));
  add('NICKNAME', escapeText(profile.name));
  if (profile.description.trim() !== '') add('NOTE', escapeText(profile.description));
  const photo = links.httpUrl(profile.image);
  if (photo !== null) add('PHOTO', photo);
  for (const email of stringsOf('email')) add('EMAIL', escapeText(email));
  for (const number of stringsOf('phone').flatMap(phoneNumbers)) lines.push(telLine(number));
  for (const url of [...stringsOf('website'), ...stringsOf('web_url')].map((value) => links.httpUrl(value))) {
    if (url !== null) add('URL', url);
  }
  for (const record of profile.records) {
    if (record.type !== 'social' || !isStringMap(record.raw)) continue;
    for (const [network, handle] of Object.entries(record.raw)) {
      if (handle.trim() !== '') lines.push(socialLine(network, handle.trim(), links));
    }
  }
  add('SOURCE', links.source);
  lines.push('END:VCARD');
  return `${lines.map(foldLine).join('\r\n')}\r\n`;
}

/** TEL: a `tel:` URI for an international number (RFC 3966 allows `-` `.` `(` `)` as separators), else text. */
function telLine(number: string): string {
  if (/^\+[0-9][0-9 ().-]*$/.test(number) && /[0-9]$/.test(number)) {
    return `TEL;VALUE=uri:tel:${number.replace(/ +/g, '-')}`;
  }
  return `TEL;VALUE=text:${escapeText(number)}`;
}

function socialLine(network: string, handle: string, links: VCardLinks): string {
  const key = network.toLowerCase();
  const type = typeParameter(key);
  const profileUrl = profileUrlOf(key, handle, links);
  if (profileUrl === null) return `X-SOCIALPROFILE${type};VALUE=text:${escapeText(handle)}`;
  return `${MESSENGERS.has(key) ? 'IMPP' : 'X-SOCIALPROFILE'}${type}:${profileUrl}`;
}

/** A handle that is a URL already stays one; a known network's handle becomes its profile URL. */
function profileUrlOf(network: string, handle: string, links: VCardLinks): string | null {
  const asUrl = links.httpUrl(handle);
  if (asUrl !== null) return asUrl;
  const build = PROFILE_URLS[network];
  if (build === undefined || !Object.hasOwn(PROFILE_URLS, network)) return null;
  // Stored data may hold lone surrogates (see withoutControls), which encodeURIComponent refuses.
  return links.httpUrl(build(encodeURIComponent(handle.toWellFormed().replace(/^@/, ''))));
}

/**
 * `;TYPE=<network>` for a network name that is a plain token; any other (stored data may hold
 * anything) as a quoted `X-SERVICE-TYPE` with RFC 6868 escapes, which cannot break the line.
 */
function typeParameter(network: string): string {
  if (/^[a-z0-9-]+$/.test(network)) return `;TYPE=${network}`;
  const quoted = withoutControls(network)
    .replace(/\^/g, '^^')
    .replace(/"/g, "^'")
    .replace(/\r\n|\r|\n/g, '^n');
  return `;X-SERVICE-TYPE="${quoted}"`;
}

/**
 * A TEXT value (RFC 6350 §3.4): backslash, comma and line breaks escaped. A semicolon needs an
 * escape only in compound properties (N, ADR), which this vCard has none of; escaped elsewhere
 * it "MAY" be, and parsers (ical.js among them) would then keep the backslash.
 */
export function escapeText(text: string): string {
  return withoutControls(text)
    .replace(/\\/g, '\\\\')
    .replace(/,/g, '\\,')
    .replace(/\r\n|\r|\n/g, '\\n');
}

/**
 * A vCard value may hold no control characters but tab and (escaped) line breaks. And it is
 * UTF-8, which has no lone surrogates: the importer refuses them, but a `json` record value
 * written by other means keeps a `\ud800` escape, which JavaScript reads as one; it becomes
 * U+FFFD, as it would on the wire anyway.
 */
function withoutControls(text: string): string {
  return text
    .toWellFormed()
    .replace(/\p{Cc}/gu, (char) => (char === '\t' || char === '\n' || char === '\r' ? char : ''));
}

const MAX_LINE_OCTETS = 75;

/**
 * Folds a content line into lines of at most 75 octets (RFC 6350 §3.2): a continuation line
 * starts with one space, which counts. Breaks fall between code points, never inside a UTF-8
 * sequence. Linear in the line: it counts octets per UTF-16 unit and cuts slices of the line,
 * joined once (building the result a character at a time took seconds and hundreds of
 * megabytes for a value of a few million characters).
 */
export function foldLine(line: string): string {
  if (Buffer.byteLength(line) <= MAX_LINE_OCTETS) return line;
  const pieces: string[] = [];
  let start = 0;
  let octets = 0;
  for (let index = 0; index < line.length; ) {
    const units = codePointUnits(line, index);
    const size = utf8Octets(line.charCodeAt(index), units);
    if (octets + size > MAX_LINE_OCTETS) {
      pieces.push(line.slice(start, index));
      start = index;
      octets = 1; // the leading space of the continuation line
    }
    octets += size;
    index += units;
  }
  pieces.push(line.slice(start));
  return pieces.join('\r\n ');
}

/** UTF-16 units of the code point at `index`: 2 for a surrogate pair, else 1. */
function codePointUnits(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code < 0xd800 || code > 0xdbff) return 1;
  const next = text.charCodeAt(index + 1);
  return next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
}

/** UTF-8 octets of a code point; a lone surrogate is written as U+FFFD, 3 octets, as Buffer does. */
function utf8Octets(firstUnit: number, units: number): number {
  if (units === 2) return 4;
  if (firstUnit < 0x80) return 1;
  return firstUnit < 0x800 ? 2 : 3;
}
