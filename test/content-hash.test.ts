import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contentHash, contentHashOfSerialized } from '../src/profiles/content-hash.js';

/** The definition: SHA-256 of the JSON of the public content, base64url, 27 characters. */
function reference(content: Parameters<typeof contentHash>[0]): string {
  const canonical = JSON.stringify([
    content.name,
    content.description,
    content.image,
    content.level,
    content.records.map((record) => [record.key, record.type, record.value]),
  ]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 27);
}

describe('content hash', () => {
  it('built from serialized values, is the hash of the JSON of the public content', () => {
    const value = fc.oneof(fc.string(), fc.dictionary(fc.string(), fc.string()));
    const content = fc.record({
      name: fc.string(),
      description: fc.string(),
      image: fc.string(),
      level: fc.integer({ min: 0, max: 2_147_483_647 }),
      records: fc.array(fc.record({ key: fc.nat(), type: fc.string(), value }), { maxLength: 6 }),
    });
    fc.assert(
      fc.property(content, (profile) => {
        const expected = reference(profile);
        expect(contentHash(profile)).toBe(expected);
        const values = profile.records.map((record) => JSON.stringify(record.value));
        expect(contentHashOfSerialized(profile, values)).toBe(expected);
      }),
    );
  });
});
