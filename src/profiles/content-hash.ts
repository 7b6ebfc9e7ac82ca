/**
 * The hash of a profile's public content. It is stored with the profile and serves as the strong
 * ETag: it changes exactly when what the API shows of the profile changes. It covers no private
 * data, so it cannot be used to test guesses of a creator's e-mail offline.
 */
import { hash } from 'node:crypto';
import type { RecordValue } from './record-value.js';

export interface PublicContent {
  name: string;
  description: string;
  image: string;
  level: number;
  /** Records in ascending key order. */
  records: ReadonlyArray<{ key: number; type: string; value: RecordValue }>;
}

export function contentHash(content: PublicContent): string {
  return contentHashOfSerialized(
    content,
    content.records.map((record) => JSON.stringify(record.value)),
  );
}

/**
 * The same hash from record values already serialized as JSON (`valueJson[i]` is
 * `JSON.stringify(content.records[i].value)`): the importer serializes each value once for the
 * database and the hash. The text hashed is exactly
 * `JSON.stringify([name, description, image, level, records.map((r) => [r.key, r.type, r.value])])`,
 * built here from its parts.
 */
export function contentHashOfSerialized(content: PublicContent, valueJson: readonly string[]): string {
  let records = '';
  for (let index = 0; index < content.records.length; index += 1) {
    const record = content.records[index];
    if (record === undefined) continue;
    records += `${index === 0 ? '' : ','}[${record.key},${JSON.stringify(record.type)},${valueJson[index]}]`;
  }
  const canonical =
    `[${JSON.stringify(content.name)},${JSON.stringify(content.description)},${JSON.stringify(content.image)},` +
    `${JSON.stringify(content.level)},[${records}]]`;
  // One-shot hash: no Hash object per profile (an import hashes a million of them).
  return hash('sha256', canonical, 'base64url').slice(0, 27);
}
