/**
 * The API-key store (src/service/api-keys.ts) on its own: which answers come from memory and
 * which from the database, that a change or a lost feed forgets every key, that a lookup begun
 * before a change never fills the cache, that last use is written in one batch, and that a
 * database that cannot answer makes keyed requests 503, never keyless.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import { listApiKeys, revokeApiKey } from '../src/db/api-key-queries.js';
import { type DatabaseHandle, openDatabase } from '../src/db/database.js';
import { generateApiKey, hashApiKey } from '../src/limits/api-key-credentials.js';
import { createLogger } from '../src/logging/logger.js';
import { ApiKeyStore, UNKNOWN_KEYS_PER_MINUTE } from '../src/service/api-keys.js';
import { RateLimitedError, UnavailableError } from '../src/service/errors.js';
import { createKey } from './support/api-keys.js';
import { startTestServer } from './support/app-server.js';
import { useTestDatabase } from './support/databases.js';

/** The address asking, as the guard passes it (worked out only when the key is read). */
const CLIENT = () => '192.0.2.1';
const silent = createLogger('silent', { pretty: false });
const config = { apiKeyProfileLimit: 111, apiKeyOwnerCheckLimit: 22, apiKeyCacheSize: 100 };

/** The handle, with its statements on the primary (reads, and the last-use write) counted. */
function counted(handle: DatabaseHandle): { database: DatabaseHandle; reads: () => number } {
  let reads = 0;
  const database: DatabaseHandle = {
    ...handle,
    readPrimary: (read) => {
      reads += 1;
      return handle.readPrimary(read);
    },
    writePrimary: (write) => {
      reads += 1;
      return handle.writePrimary(write);
    },
  };
  return { database, reads: () => reads };
}

describe('the API-key store', () => {
  const suite = useTestDatabase('pglite', (db) => seedDemoData(db));
  const stores: ApiKeyStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  function storeOn(database: DatabaseHandle, live: { value: boolean }) {
    let started = 0;
    const store = new ApiKeyStore({
      database,
      config,
      logger: silent,
      isLive: () => live.value,
      startFeed: () => {
        started += 1;
      },
      flushIntervalMs: 3_600_000,
    });
    stores.push(store);
    return { store, started: () => started };
  }

  it('answers a known key from memory while the feed is live, with its limits or the defaults', async () => {
    const { database, reads } = counted(suite.handle);
    const { store, started } = storeOn(database, { value: true });
    const own = await createKey(suite.handle, { profileLimit: 5 });
    const defaults = await createKey(suite.handle);
    expect(await store.resolve(hashApiKey(own.key), CLIENT)).toEqual({
      id: own.id,
      limits: { profile: 5, 'owner-check': 22 },
      documentsOnly: false,
    });
    expect(store.resolve(hashApiKey(own.key), CLIENT)).toEqual({
      id: own.id,
      limits: { profile: 5, 'owner-check': 22 },
      documentsOnly: false,
    });
    expect(await store.resolve(hashApiKey(defaults.key), CLIENT)).toEqual({
      id: defaults.id,
      limits: { profile: 111, 'owner-check': 22 },
      documentsOnly: false,
    });
    expect(reads()).toBe(2);
    expect(started()).toBe(1);
  });

  it('works out the address asking only when it reads the database', async () => {
    const { store } = storeOn(suite.handle, { value: true });
    const { key, id } = await createKey(suite.handle);
    const asked = vi.fn(CLIENT);
    await store.resolve(hashApiKey(key), asked);
    expect(asked).toHaveBeenCalledTimes(1);
    // Hits, answered at once (not a promise), without asking.
    expect(store.resolve(hashApiKey(key), asked)).toMatchObject({ id });
    expect(store.resolve(hashApiKey(key), asked)).toMatchObject({ id });
    expect(asked).toHaveBeenCalledTimes(1);
  });

  it('remembers unknown keys too, until a key changes', async () => {
    const { database, reads } = counted(suite.handle);
    const { store } = storeOn(database, { value: true });
    const hash = hashApiKey(generateApiKey());
    expect(await store.resolve(hash, CLIENT)).toBeNull();
    expect(store.resolve(hash, CLIENT)).toBeNull();
    expect(reads()).toBe(1);
    store.changed();
    expect(await store.resolve(hash, CLIENT)).toBeNull();
    expect(reads()).toBe(2);
  });

  it('reads every key from the database while the feed is not live, and sees a revocation at once', async () => {
    const { database, reads } = counted(suite.handle);
    const live = { value: false };
    const { store } = storeOn(database, live);
    const { id, key } = await createKey(suite.handle);
    const hash = hashApiKey(key);
    expect(await store.resolve(hash, CLIENT)).toMatchObject({ id });
    expect(await store.resolve(hash, CLIENT)).toMatchObject({ id });
    expect(reads()).toBe(2);
    // Not heard (the feed is not live): the database says it.
    await revokeApiKey(suite.handle.db, id);
    expect(await store.resolve(hash, CLIENT)).toBeNull();
  });

  it('drops what a lookup read when a change came while it ran', async () => {
    const { database, reads } = counted(suite.handle);
    const { store } = storeOn(database, { value: true });
    const { key } = await createKey(suite.handle);
    const hash = hashApiKey(key);
    const pending = store.resolve(hash, CLIENT);
    store.changed();
    expect(await pending).not.toBeNull();
    await store.resolve(hash, CLIENT);
    expect(reads()).toBe(2);
  });

  it('shares one read among concurrent lookups of a hash', async () => {
    const { database, reads } = counted(suite.handle);
    const { store } = storeOn(database, { value: true });
    const { key } = await createKey(suite.handle);
    const hash = hashApiKey(key);
    const answers = await Promise.all([
      store.resolve(hash, CLIENT),
      store.resolve(hash, CLIENT),
      store.resolve(hash, CLIENT),
    ]);
    expect(new Set(answers.map((answer) => answer?.id)).size).toBe(1);
    expect(reads()).toBe(1);
  });

  it('stops looking up made-up keys of an address past UNKNOWN_KEYS_PER_MINUTE: 429, not 401, and no query', async () => {
    const { database, reads } = counted(suite.handle);
    const { store } = storeOn(database, { value: true });
    const valid = await createKey(suite.handle);
    await store.resolve(hashApiKey(valid.key), CLIENT); // in the cache before the flood
    const other = await createKey(suite.handle);
    for (let i = 0; i < UNKNOWN_KEYS_PER_MINUTE; i += 1) {
      expect(await store.resolve(hashApiKey(generateApiKey()), CLIENT)).toBeNull();
    }
    const before = reads();
    await expect(store.resolve(hashApiKey(generateApiKey()), CLIENT)).rejects.toBeInstanceOf(RateLimitedError);
    // A key not in the cache may be valid: it is not called unknown either.
    await expect(store.resolve(hashApiKey(other.key), CLIENT)).rejects.toBeInstanceOf(RateLimitedError);
    expect(reads()).toBe(before);
    // Cached keys still answer, and other addresses are not affected.
    expect(store.resolve(hashApiKey(valid.key), CLIENT)).toMatchObject({ id: valid.id });
    expect(await store.resolve(hashApiKey(other.key), () => '192.0.2.2')).toMatchObject({ id: other.id });
  });

  it('writes when keys were last used in one batch, only forward', async () => {
    const { database, reads } = counted(suite.handle);
    const { store } = storeOn(database, { value: true });
    const first = await createKey(suite.handle);
    const second = await createKey(suite.handle);
    await store.resolve(hashApiKey(first.key), CLIENT);
    await store.resolve(hashApiKey(second.key), CLIENT);
    const before = reads();
    await store.flushLastUsed();
    expect(reads() - before).toBe(1);
    await store.flushLastUsed(); // nothing new: no write
    expect(reads() - before).toBe(1);
    const rows = await listApiKeys(suite.handle.db);
    const usedAt = (id: string) => rows.find((row) => row.id === id)?.lastUsedAt?.getTime();
    expect(usedAt(first.id)).toBeGreaterThan(Date.now() - 60_000);
    expect(usedAt(second.id)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('API keys while the database cannot answer', () => {
  let unreachable: DatabaseHandle;
  beforeAll(async () => {
    // A PostgreSQL URL on a loopback port where nothing listens.
    unreachable = await openDatabase({
      url: 'postgres://postgres@127.0.0.1:1/none',
      dataDir: '',
      connectTimeoutSeconds: 1,
    });
  });
  afterAll(async () => {
    await unreachable?.close();
  });

  it('rejects a lookup as unavailable, and the request with a key answers 503, not keyless', async () => {
    const store = new ApiKeyStore({
      database: unreachable,
      config,
      logger: silent,
      isLive: () => false,
      startFeed: () => {},
    });
    await expect(store.resolve(hashApiKey(generateApiKey()), CLIENT)).rejects.toBeInstanceOf(UnavailableError);
    await store.close();

    const server = await startTestServer(unreachable, { PROFILE_CACHE_SIZE: '0' });
    try {
      const response = await fetch(`${server.url}/api/owner-check?email=a@example.com&name=demo@me`, {
        headers: { 'x-api-key': generateApiKey() },
      });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(response.headers.get('ratelimit-limit')).toBeNull();
      expect(await response.json()).toEqual({ error: 'Service unavailable' });
    } finally {
      await server.close();
    }
  });
});
