/** API keys for tests, made the way `npm run keys -- create` makes them. */
import { insertApiKey } from '../../src/db/api-key-queries.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { generateApiKey, generateApiKeyId, hashApiKey } from '../../src/limits/api-key-credentials.js';

export interface TestKey {
  id: string;
  key: string;
}

export async function createKey(
  handle: DatabaseHandle,
  limits: { profileLimit?: number; ownerCheckLimit?: number } = {},
): Promise<TestKey> {
  const key = generateApiKey();
  const id = generateApiKeyId();
  await insertApiKey(handle.db, {
    id,
    name: `test app ${id}`,
    keyHash: hashApiKey(key),
    profileLimit: limits.profileLimit ?? null,
    ownerCheckLimit: limits.ownerCheckLimit ?? null,
  });
  return { id, key };
}
