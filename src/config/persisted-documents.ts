/**
 * Trusted documents (GraphQL-over-HTTP, Appendix A "Persisted Documents"): the manifests named in
 * PERSISTED_DOCUMENTS, read once at start into one map from document id to document text. A
 * client then sends `documentId` instead of `query` (src/graphql/transport/trusted-documents.ts).
 *
 * Two manifest forms, told apart by their content:
 * - graphql-codegen's `persisted-documents.json` (client-preset): `{"<hash>": "<document>"}`;
 * - Apollo's persisted query manifest:
 *   `{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id","body","name","type"}]}`.
 * A bare hash means `sha256:<hash>`; an id may also be given whole (`sha256:<hex>`).
 *
 * A file that cannot be used stops start-up with one line naming it: unreadable, not JSON, in
 * neither form, a document that does not parse, or an id that is not the SHA-256 of its
 * document's text (the spec derives it from the text, so a client hashing the same text would not
 * find it; it also means two files cannot give one id different documents). A manifest is a list
 * of what may run: a mistake in it must not show up later as documents refused at request time.
 */
import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'graphql';
import { ConfigError } from './config-error.js';

/** Document id (`sha256:<64 lower-case hex>`) → the document's text, as the manifest gives it. */
export type PersistedDocuments = ReadonlyMap<string, string>;

export const PERSISTED_DOCUMENTS_VARIABLE = 'PERSISTED_DOCUMENTS';

const SHA256_HEX = /^[0-9a-f]{64}$/;
const SHA256_ID = /^sha256:([0-9a-f]{64})$/;
const APOLLO_FORMAT = 'apollo-persisted-query-manifest';
const OPERATION_TYPES: ReadonlySet<string> = new Set(['query', 'mutation', 'subscription']);

/** A manifest's problem; the loader adds the file's name. */
class ManifestError extends Error {}

/** The id of a manifest key: a bare hash is a SHA-256 one. */
function documentIdOf(key: string): string {
  if (SHA256_HEX.test(key)) return `sha256:${key}`;
  if (SHA256_ID.test(key)) return key;
  throw new ManifestError(`has the id ${JSON.stringify(key)}, expected 64 lower-case hex digits or sha256:<hex>`);
}

function checkedDocument(id: string, text: unknown): string {
  if (typeof text !== 'string') throw new ManifestError(`gives ${id} a document that is not a string`);
  if (id !== `sha256:${hash('sha256', text, 'hex')}`) {
    throw new ManifestError(`gives ${id} a document whose SHA-256 is not that id`);
  }
  try {
    parse(text);
  } catch (error) {
    throw new ManifestError(`gives ${id} a document that does not parse: ${(error as Error).message}`);
  }
  return text;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The documents of one manifest's JSON, in either form; throws a ManifestError when it is neither. */
function manifestDocuments(json: unknown): Map<string, string> {
  if (!isObject(json)) throw new ManifestError('is not a JSON object');
  const documents = new Map<string, string>();
  if (json.format === undefined) {
    for (const [key, text] of Object.entries(json)) {
      const id = documentIdOf(key);
      documents.set(id, checkedDocument(id, text));
    }
    return documents;
  }
  if (json.format !== APOLLO_FORMAT || json.version !== 1 || !Array.isArray(json.operations)) {
    throw new ManifestError(
      `is neither a {"<hash>": "<document>"} map nor {"format":"${APOLLO_FORMAT}","version":1,"operations":[…]}`,
    );
  }
  json.operations.forEach((operation: unknown, index) => {
    if (!isObject(operation) || typeof operation.id !== 'string') {
      throw new ManifestError(`has an operation without a string id (operations[${index}])`);
    }
    if (typeof operation.type === 'string' && !OPERATION_TYPES.has(operation.type)) {
      throw new ManifestError(
        `has an operation of unknown type ${JSON.stringify(operation.type)} (operations[${index}])`,
      );
    }
    const id = documentIdOf(operation.id);
    documents.set(id, checkedDocument(id, operation.body));
  });
  return documents;
}

/**
 * Every document of the manifests `files` (in order), read now. Throws a ConfigError naming the
 * variable and the file for any file that cannot be used (see above).
 */
export function loadPersistedDocuments(files: readonly string[]): PersistedDocuments {
  const documents = new Map<string, string>();
  for (const file of files) {
    const fail = (problem: string): never => {
      throw new ConfigError(PERSISTED_DOCUMENTS_VARIABLE, `file ${JSON.stringify(file)} ${problem}`);
    };
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      fail(`cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      fail(`is not JSON: ${(error as Error).message}`);
    }
    let found = new Map<string, string>();
    try {
      found = manifestDocuments(json);
    } catch (error) {
      if (error instanceof ManifestError) fail(error.message);
      throw error;
    }
    for (const [id, document] of found) documents.set(id, document);
  }
  return documents;
}

/** PERSISTED_DOCUMENTS: comma-separated manifest files, relative ones from the working directory. */
export function persistedDocumentFiles(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((file) => file.trim())
    .filter((file) => file !== '')
    .map((file) => path.resolve(file));
}
