import { describe, expect, it } from 'vitest';
import { type ProfileObject, validateDataObject } from '../src/data/data-line.js';
import {
  type GeneratorOptions,
  generateDataObjects,
  generatedName,
  generatedNames,
  generateNdjson,
} from '../src/data/generator.js';
import { importLines } from '../src/data/importer.js';
import { itemSeed, mulberry32 } from '../src/data/prng.js';
import { canonicalName, parseNameId } from '../src/names/name-id.js';
import { MAP_RECORD_TYPES, STRING_RECORD_TYPES } from '../src/profiles/record-types.js';
import { exportText } from './support/data-files.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';

const OPTIONS: GeneratorOptions = { profiles: 600, seed: 42, namespaces: 6 };
const text = (options: GeneratorOptions) => [...generateNdjson(options, 97)].join('');
const profilesOf = (options: GeneratorOptions) =>
  [...generateDataObjects(options)].filter((object): object is ProfileObject => object.kind === 'profile');

describe('seeded random numbers', () => {
  it('repeat for a seed and differ between seeds and items', () => {
    const first = mulberry32(7);
    const again = mulberry32(7);
    const sequence = Array.from({ length: 5 }, () => first());
    expect(Array.from({ length: 5 }, () => again())).toEqual(sequence);
    expect(sequence.every((value) => value >= 0 && value < 1)).toBe(true);
    expect(mulberry32(8)()).not.toBe(sequence[0]);
    expect(new Set(Array.from({ length: 1000 }, (_, index) => itemSeed(1, index))).size).toBe(1000);
  });
});

describe('synthetic data generator', () => {
  it('gives the same bytes for the same options, and different bytes for another seed', () => {
    const output = text(OPTIONS);
    expect(text(OPTIONS)).toBe(output);
    expect(text({ ...OPTIONS, seed: 43 })).not.toBe(output);
    // Chunking does not change the bytes.
    expect([...generateNdjson(OPTIONS, 1)].join('')).toBe(output);
    expect(output.split('\n')).toHaveLength(OPTIONS.profiles + 6 + 1);
  });

  it('writes only valid lines, namespaces first, with unique canonical names', () => {
    const objects = [...generateDataObjects(OPTIONS)];
    expect(objects.slice(0, 6).every((object) => object.kind === 'namespace')).toBe(true);
    for (const object of objects) {
      const result = validateDataObject(object);
      expect(result.ok, JSON.stringify(result)).toBe(true);
    }
    const names = objects.filter((object) => object.kind === 'profile').map((object) => object.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      expect(canonicalName(name)).toBe(name);
      expect(parseNameId(name)).not.toBeNull();
    }
  });

  it('gives any profile name on its own, equal to the name in the file', () => {
    const profiles = profilesOf(OPTIONS);
    expect([...generatedNames(OPTIONS)]).toEqual(profiles.map((profile) => profile.name));
    expect(generatedName(OPTIONS, 417)).toBe(profiles[417]!.name);
  });

  it('is realistic: every record type, empty values, several namespaces, non-ASCII names, no records, unknown types', () => {
    const profiles = profilesOf(OPTIONS);
    const records = profiles.flatMap((profile) => Object.values(profile.records ?? {}));
    const types = new Set(records.map((record) => record.type));
    for (const type of [...STRING_RECORD_TYPES, ...MAP_RECORD_TYPES]) expect(types, type).toContain(type);
    expect(types).toContain('pgp_key');
    expect(records.some((record) => record.value === '')).toBe(true);
    expect(records.some((record) => typeof record.value === 'object' && Object.keys(record.value).length === 0)).toBe(
      true,
    );
    expect(profiles.some((profile) => profile.records === undefined)).toBe(true);
    expect(profiles.some((profile) => profile.description === undefined)).toBe(true);
    expect(new Set(profiles.map((profile) => profile.name.split('@')[1])).size).toBe(6);
    expect(profiles.filter((profile) => /\P{ASCII}/u.test(profile.name.split('@')[0]!)).length).toBeGreaterThan(20);
    const sizes = profiles.map((profile) => JSON.stringify(profile).length);
    expect(Math.max(...sizes)).toBeGreaterThan(3 * Math.min(...sizes));
  });

  it('gives namespaces beyond its list of names made-up ones', () => {
    const namespaces = [...generateDataObjects({ profiles: 0, seed: 1, namespaces: 20 })];
    expect(namespaces).toHaveLength(20);
    expect(new Set(namespaces.map((object) => object.name)).size).toBe(20);
    for (const object of namespaces) expect(validateDataObject(object).ok).toBe(true);
  });
});

describe.each(databaseKinds())('generated data on %s', (kind) => {
  const database = useTestDatabase(kind);

  it('imports cleanly and exports as the same data', async () => {
    const lines = text(OPTIONS).split('\n');
    const report = await importLines(database.handle.db, lines, { batchSize: 50 });
    expect(report).toMatchObject({
      ok: true,
      namespaces: 6,
      profiles: OPTIONS.profiles,
      profilesChanged: OPTIONS.profiles,
    });

    const normalise = (line: string) => {
      const result = validateDataObject(JSON.parse(line));
      if (!result.ok) throw new Error(result.reason);
      return JSON.stringify(result.line);
    };
    const exported = (await exportText(database.handle.db)).trimEnd().split('\n').map(normalise).sort();
    expect(exported).toEqual(
      lines
        .filter((line) => line !== '')
        .map(normalise)
        .sort(),
    );
  });
});
