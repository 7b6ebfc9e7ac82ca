/**
 * The committed schema.graphql is the schema of the code, and `npm run schema` prints it; plus
 * the rule that picks a record's GraphQL variant.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isSpecifiedScalarType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../src/graphql/schema/schema.js';
import { recordVariant } from '../src/graphql/schema/types/records.js';
import { StoredRecord, splitStoredRecords } from '../src/profiles/stored-records.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('schema.graphql', () => {
  // The CLI runs in a Node process of its own: the schema is printed exactly as `npm run schema`
  // prints it, with the one copy of graphql that Node loads (Vitest would load a second one).
  it('is the schema of the code, as `npm run schema` prints it (run it after changing a type)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nps-schema-'));
    try {
      const target = path.join(dir, 'schema.graphql');
      await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/print-schema.ts', target], {
        cwd: ROOT,
      });
      const printed = readFileSync(target, 'utf8');
      expect(printed).toContain('type Query {');
      expect(readFileSync(path.join(ROOT, 'schema.graphql'), 'utf8')).toBe(printed);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('descriptions', () => {
  it('exist on every type, field, argument and enum value, for GraphiQL and generated clients', () => {
    const missing: string[] = [];
    const need = (where: string, description: string | null | undefined) => {
      if (description == null || description.trim() === '') missing.push(where);
    };
    for (const type of Object.values(schema.getTypeMap())) {
      if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
      need(type.name, type.description);
      if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) {
          need(`${type.name}.${field.name}`, field.description);
          for (const arg of 'args' in field ? field.args : [])
            need(`${type.name}.${field.name}(${arg.name})`, arg.description);
        }
      }
      if (isEnumType(type)) for (const value of type.getValues()) need(`${type.name}.${value.name}`, value.description);
    }
    expect(missing).toEqual([]);
  });
});

describe('record variants', () => {
  it.each([
    ['name', 'Demo', 'TextRecord'],
    ['email', '', 'TextRecord'],
    ['website', 'https://x', 'TextRecord'],
    ['tg_bot', '@bot', 'TextRecord'],
    ['web_url', 'https://x', 'TextRecord'],
    ['web3_url', '', 'TextRecord'],
    ['phone', '+1,+2', 'PhoneRecord'],
    ['social', { twitter: 'x' }, 'SocialRecord'],
    ['crypto', { btc: 'x' }, 'CryptoRecord'],
    ['link', { Blog: 'x' }, 'MapRecord'],
    ['notes', {}, 'MapRecord'],
    ['img', { cover: 'x' }, 'MapRecord'],
    ['pgp', 'key', 'GenericRecord'],
    ['wallets', { doge: 'x' }, 'GenericRecord'],
    ['name', { first: 'x' }, 'GenericRecord'],
    ['phone', { mobile: '+1' }, 'GenericRecord'],
    ['social', 'twitter', 'GenericRecord'],
    ['link', { n: 1 }, 'GenericRecord'],
    ['Name', 'case matters', 'GenericRecord'],
  ])('%s with %j is a %s', (type, value, variant) => {
    // Read from the database's records text (the value not parsed) and from a parsed value.
    const stored = splitStoredRecords(`{"1":{"type":${JSON.stringify(type)},"value":${JSON.stringify(value)}}}`);
    expect(stored).toHaveLength(1);
    expect(recordVariant(stored?.[0] as StoredRecord)).toBe(variant);
    expect(recordVariant(StoredRecord.of('1', type, value))).toBe(variant);
  });
});

describe('fields read per record', () => {
  // A field without a resolver is a property read in graphql-jit's compiled code; one with a
  // resolver is a call with a resolve info object built for it, per record of every profile
  // (`profiles(names:)` of 100 names reads about a thousand records).
  it('are properties, not resolvers: Profile.records and key, type and raw of every record type', () => {
    const profile = schema.getType('Profile');
    const record = schema.getType('ProfileRecord');
    if (!isObjectType(profile) || !isInterfaceType(record)) throw new Error('Profile or ProfileRecord changed kind');
    const resolved: string[] = [];
    if (profile.getFields().records?.resolve !== undefined) resolved.push('Profile.records');
    for (const type of [record, ...schema.getPossibleTypes(record)]) {
      for (const name of ['key', 'type', 'raw']) {
        const field = type.getFields()[name];
        if (field === undefined) throw new Error(`${type.name}.${name} is gone`);
        if (field.resolve !== undefined) resolved.push(`${type.name}.${name}`);
      }
    }
    expect(resolved).toEqual([]);
  });
});
