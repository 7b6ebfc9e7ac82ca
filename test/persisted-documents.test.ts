/**
 * PERSISTED_DOCUMENTS: the manifests of trusted documents read at start, in graphql-codegen's and
 * Apollo's forms, and every file that cannot be used stopping start-up with one line naming it.
 */
import { hash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/config.js';
import { loadPersistedDocuments } from '../src/config/persisted-documents.js';

const folder = mkdtempSync(path.join(os.tmpdir(), 'nps-manifests-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let files = 0;
/** A manifest file holding `content` (JSON unless a string). */
const manifest = (content: unknown): string => {
  files += 1;
  const file = path.join(folder, `manifest-${files}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
};

const QUERY = 'query Lookup($name: String!) { profile(name: $name) { name } }';
const WATCH = 'subscription Watch($names: [String!]!) { profileChanged(names: $names) { name } }';
const sha = (text: string) => hash('sha256', text, 'hex');
const apollo = (operations: unknown[]) => ({ format: 'apollo-persisted-query-manifest', version: 1, operations });

describe('loading trusted documents', () => {
  it('reads both manifest forms, bare and prefixed ids, into one map by sha256: id', () => {
    const codegen = manifest({ [sha(QUERY)]: QUERY });
    const apolloFile = manifest(apollo([{ id: sha(WATCH), body: WATCH, name: 'Watch', type: 'subscription' }]));
    const prefixed = manifest({ [`sha256:${sha(QUERY)}`]: QUERY });
    const documents = loadPersistedDocuments([codegen, apolloFile, prefixed]);
    expect([...documents]).toEqual([
      [`sha256:${sha(QUERY)}`, QUERY],
      [`sha256:${sha(WATCH)}`, WATCH],
    ]);
  });

  it('is empty without the variable, and reads comma-separated files named by it', () => {
    expect(loadConfig({}).persistedDocuments.size).toBe(0);
    const first = manifest({ [sha(QUERY)]: QUERY });
    const second = manifest(apollo([{ id: sha(WATCH), body: WATCH, name: 'Watch', type: 'subscription' }]));
    const config = loadConfig({ PERSISTED_DOCUMENTS: ` ${first} ,${path.relative(process.cwd(), second)},` });
    expect(config.persistedDocuments.get(`sha256:${sha(WATCH)}`)).toBe(WATCH);
    expect(config.persistedDocuments.size).toBe(2);
  });

  it('stops start-up with one line naming the file for any file it cannot use', () => {
    const other = 'query Other { __typename }';
    const cases: Array<[string, string]> = [
      [path.join(folder, 'missing.json'), 'cannot be read (ENOENT)'],
      [manifest('{"not json'), 'is not JSON'],
      [manifest([QUERY]), 'is not a JSON object'],
      [manifest({ [sha(QUERY)]: other }), 'a document whose SHA-256 is not that id'],
      [manifest({ [sha(QUERY).toUpperCase()]: QUERY }), 'expected 64 lower-case hex digits or sha256:<hex>'],
      [manifest({ md5: QUERY }), 'has the id "md5"'],
      [manifest({ [sha('query {')]: 'query {' }), 'a document that does not parse'],
      [manifest({ [sha(QUERY)]: 5 }), 'a document that is not a string'],
      [manifest({ format: 'apollo-persisted-query-manifest', version: 2, operations: [] }), 'is neither'],
      [manifest(apollo([{ body: QUERY }])), 'an operation without a string id (operations[0])'],
      [manifest(apollo([{ id: sha(QUERY), body: QUERY, type: 'query!' }])), 'of unknown type "query!"'],
    ];
    for (const [file, problem] of cases) {
      let thrown: unknown;
      try {
        loadConfig({ PERSISTED_DOCUMENTS: file });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      const message = (thrown as Error).message;
      expect(message).toContain(`Invalid configuration: PERSISTED_DOCUMENTS file ${JSON.stringify(file)}`);
      expect(message).toContain(problem);
      expect(message).not.toContain('\n');
    }
  });

  it('takes a document that two files both list', () => {
    const id = sha(QUERY);
    const same = manifest(apollo([{ id, body: QUERY, name: 'Lookup', type: 'query' }]));
    expect(loadPersistedDocuments([manifest({ [id]: QUERY }), same]).size).toBe(1);
  });
});
