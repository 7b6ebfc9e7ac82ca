/**
 * Profiles at the data file's limits (src/data/data-limits.ts) are accepted by the importer, and
 * every answer about them stays within the sizes docs/data.md states, on every test database.
 * Each profile is filled with the characters that make one answer longest (measured: control
 * characters for JSON, which escapes each as six bytes; 4-byte characters in URLs for the
 * vCard, where each becomes twelve). The bounds are on bytes, not time: the work of every answer
 * is linear in its size (src/profiles/vcard.ts folds in one pass).
 */
import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { DATA_LIMITS } from '../src/data/data-limits.js';
import { importLines } from '../src/data/importer.js';
import { namePath } from '../src/service/links.js';
import { useTestServer } from './support/app-server.js';
import { ndjson } from './support/data-files.js';
import { databaseKinds } from './support/databases.js';
import { LONGEST_NAMESPACE, longestName, recordsAtLimits } from './support/largest-profiles.js';

const PUBLIC_URL = 'https://names.example.com';
/** docs/data.md, "Limits": the largest profile lookup (REST JSON) and vCard, in bytes. */
const LARGEST_REST_JSON = 240_000;
const LARGEST_VCARD = 475_000 + PUBLIC_URL.length;

/** [what it is built for, fill character, social networks, how the rest of the records are filled] */
const SHAPES: Array<[string, string, string[], 'phone' | 'website']> = [
  ['JSON escapes', '\u0001', ['😀'], 'website'],
  ['vCard URLs', '😀', ['😀'], 'website'],
  ['vCard social profile URLs', '😀', ['linkedin', 'telegram'], 'website'],
  ['vCard phone numbers', '😀', ['"'], 'phone'],
  ['vCard escapes', '\\', ['a'], 'phone'],
];

const profileAt = (index: number, char: string, networks: string[], fill: 'phone' | 'website') => ({
  kind: 'profile',
  name: longestName(index),
  creatorEmail: `${'a'.repeat(240)}@example.com`,
  description: char.repeat(DATA_LIMITS.description),
  image: `https://i.example/${char.repeat(DATA_LIMITS.image - 18)}`,
  level: 2_147_483_647,
  records: recordsAtLimits(char, networks, fill),
});

describe.each(databaseKinds())('answers about the largest profiles on %s', (kind) => {
  const suite = useTestServer(
    kind,
    async (db) => {
      const lines = ndjson(
        { kind: 'namespace', name: LONGEST_NAMESPACE, ownerEmail: 'owner@example.com' },
        ...SHAPES.map(([, char, networks, fill], index) => profileAt(index, char, networks, fill)),
      );
      expect((await importLines(db, lines)).problems).toEqual([]);
    },
    { PUBLIC_URL, PROFILE_LIMIT: '0' },
  );

  it.each(SHAPES.map((shape, index) => [shape[0], index] as const))(
    'answers the profile built for %s within the documented sizes',
    async (_, index) => {
      const path = `${suite.server.url}/api/${namePath(longestName(index))}`;
      const rest = await fetch(path);
      expect(rest.status).toBe(200);
      const document = Buffer.from(await rest.arrayBuffer());
      expect(document.length).toBeLessThanOrEqual(LARGEST_REST_JSON);
      const { description } = JSON.parse(document.toString('utf8')) as { description: string };
      expect([...description]).toHaveLength(DATA_LIMITS.description);

      const vcard = await fetch(`${path}/vcard`);
      expect(vcard.status).toBe(200);
      const text = Buffer.from(await vcard.arrayBuffer());
      expect(text.length).toBeLessThanOrEqual(LARGEST_VCARD);
      const [type] = ICAL.parse(text.toString('utf8')) as unknown as [string];
      expect(type).toBe('vcard');
    },
  );
});
