/**
 * Every answer the service gives about one profile, requested over HTTP and checked for what a
 * client relies on whatever the stored data: no 5xx, the format's content type, and a body that
 * is well-formed in its format (JSON that parses, a vCard 4.0 that ical.js reads with lines of at
 * most 75 octets of valid UTF-8, an SVG that is XML, links that are clean absolute URLs).
 * Suites then compare what came back with what they stored.
 */
import ICAL from 'ical.js';
import { expect } from 'vitest';
import { namePath } from '../../src/service/links.js';
import { postGraphQL } from './graphql-client.js';

/** An absolute http(s) URL of RFC 3986 characters only: safe in a header, an href, a vCard URI. */
const CLEAN_URL = /^https?:\/\/[!#-;=?-[\]_a-z~]+$/i;

export type JCardProperty = [
  name: string,
  params: Record<string, string | string[]>,
  type: string,
  ...values: unknown[],
];

export interface StoredRecord {
  type: string;
  value: string | Record<string, string>;
}

export interface Answers {
  /** The profile lookup, parsed. */
  rest: { name: string; description: string; image: string; records: Record<string, StoredRecord> };
  /** `profile` of the GraphQL document below. */
  graphql: GraphQLProfile;
  /** The vCard's properties as ical.js reads them. */
  vcard: JCardProperty[];
  jrd: { subject: string; aliases: string[]; links: Array<{ rel: string; type: string; href: string }> };
  /** The avatar: the SVG's text, or the redirect's Location. */
  avatar: { svg: string } | { location: string };
}

interface GraphQLProfile {
  name: string;
  description: string;
  image: string;
  avatarUrl: string;
  records: Array<{
    __typename: string;
    key: string;
    type: string;
    raw: unknown;
    value?: string;
    numbers?: string[];
    entries?: Array<{ key: string; value: string }>;
    twitter?: string | null;
    btc?: string | null;
    entry?: string | null;
  }>;
  wallets: Array<{ symbol: string; address: string; chain: string | null; accountId: string | null }>;
  wallet: { address: string } | null;
}

const PROFILE_DOCUMENT = `query ($name: String!) {
  profile(name: $name) {
    name description image avatarUrl(size: 64)
    records {
      __typename key type raw
      ... on TextRecord { value }
      ... on PhoneRecord { value numbers }
      ... on SocialRecord { entries { key value } twitter }
      ... on CryptoRecord { entries { key value } btc }
      ... on MapRecord { entries { key value } entry(key: "Blog") }
    }
    wallets { symbol address chain accountId }
    wallet(symbol: "ETH") { address }
  }
}`;

/** Requests every format about `name` (a canonical name that has a profile) and checks each. */
export async function everyAnswer(serverUrl: string, name: string, publicUrl: string): Promise<Answers> {
  const path = `${serverUrl}/api/${namePath(name)}`;
  const rest = await jsonAnswer(path, 'application/json; charset=utf-8');
  const batch = (await jsonAnswer(
    `${serverUrl}/api/profiles?names=${encodeURIComponent(name)}`,
    'application/json; charset=utf-8',
  )) as { profiles: Record<string, unknown> };
  expect(batch.profiles[name], 'batch').toEqual(rest);

  const graphql = await postGraphQL<{ profile: GraphQLProfile }>(fetch, `${serverUrl}/graphql`, PROFILE_DOCUMENT, {
    name,
  });
  expect(graphql.status, graphql.text).toBe(200);
  expect(graphql.body.errors, graphql.text).toBeUndefined();
  const profile = graphql.body.data?.profile;
  if (profile === undefined || profile === null) throw new Error(`no GraphQL profile: ${graphql.text}`);
  expect(profile.avatarUrl.startsWith(`${publicUrl}/api/`)).toBe(true);
  expect(profile.avatarUrl).toMatch(CLEAN_URL);

  const vcard = await vcardAnswer(`${path}/vcard`);
  const jrd = (await jsonAnswer(
    `${serverUrl}/.well-known/webfinger?resource=${encodeURIComponent(`acct:${name}`)}`,
    'application/jrd+json',
  )) as Answers['jrd'];
  for (const link of jrd.links) expect(link.href, 'WebFinger link').toMatch(CLEAN_URL);

  return { rest: rest as Answers['rest'], graphql: profile, vcard, jrd, avatar: await avatarAnswer(`${path}/avatar`) };
}

async function jsonAnswer(url: string, contentType: string): Promise<unknown> {
  const response = await fetch(url);
  const text = await response.text();
  expect(response.status, `${url}: ${text.slice(0, 200)}`).toBe(200);
  expect(response.headers.get('content-type')).toBe(contentType);
  return JSON.parse(text) as unknown;
}

async function vcardAnswer(url: string): Promise<JCardProperty[]> {
  const response = await fetch(url);
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(response.status, `${url}: ${bytes.toString('utf8').slice(0, 200)}`).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/vcard; charset=utf-8');
  expect(bytes.subarray(-2).toString()).toBe('\r\n');
  for (const line of bytes.toString('latin1').split('\r\n').slice(0, -1)) {
    const raw = Buffer.from(line, 'latin1');
    expect(raw.length, line).toBeLessThanOrEqual(75);
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(raw), line).not.toThrow();
    expect(raw.includes(0x0a) || raw.includes(0x0d)).toBe(false);
  }
  const [kind, properties] = ICAL.parse(bytes.toString('utf8')) as unknown as [string, JCardProperty[]];
  expect(kind).toBe('vcard');
  expect(properties[0]).toEqual(['version', {}, 'text', '4.0']);
  for (const property of properties) {
    if (property[2] === 'uri')
      expect(String(property[3]), property[0]).toMatch(/^(https?:\/\/[!#-;=?-[\]_a-z~]+|tel:\+[0-9-().]+)$/i);
  }
  return properties;
}

async function avatarAnswer(url: string): Promise<Answers['avatar']> {
  const response = await fetch(url, { redirect: 'manual' });
  const text = await response.text();
  if (response.status === 302) {
    const location = response.headers.get('location') ?? '';
    expect(location).toMatch(CLEAN_URL);
    return { location };
  }
  expect(response.status, text).toBe(200);
  expect(response.headers.get('content-type')).toBe('image/svg+xml');
  expectWellFormedSvg(text);
  return { svg: text };
}

/**
 * The avatar SVG is one fixed shape (src/profiles/avatar-svg.ts): checked against that shape,
 * with only XML characters, attribute values without `<` or a bare `&`, and text without markup.
 */
function expectWellFormedSvg(svg: string): void {
  const shape =
    /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="(\d+)" height="\1" viewBox="0 0 \1 \1" role="img" aria-label="((?:[^<>&"]|&#\d+;)+)"><rect width="\1" height="\1" fill="#[0-9a-f]{6}"\/><text( [a-z-]+="[^<>&"]*")*>((?:[^<>&]|&#\d+;)+)<\/text><\/svg>$/u;
  expect(svg).toMatch(shape);
  // XML 1.0's Char production.
  expect(svg).toMatch(/^[\t\n\r\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u);
}
