/**
 * The hash of a profile's public content. It is stored with the profile and serves as the strong
 * ETag: it changes exactly when what the API shows of the profile changes. It covers no private
 * data, so it cannot be used to test guesses of a creator's e-mail offline.
 */
import { createHash } from 'node:crypto';
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
  const canonical = JSON.stringify([
    content.name,
    content.description,
    content.image,
    content.level,
    content.records.map((record) => [record.key, record.type, record.value]),
  ]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 27);
}
