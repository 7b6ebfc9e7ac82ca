/**
 * Automatic persisted queries: a client may send the SHA-256 of a document it sent before
 * (`extensions.persistedQuery`), and the plugin (@graphql-yoga/plugin-apq) fills the query in
 * from the store below in its `onParams` hook, before Yoga checks the parameters.
 */
import { useAPQ } from '@graphql-yoga/plugin-apq';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Cache } from '../execution/document-cache.js';

/** The texts kept by their hash, at most this many bytes of them. */
const PERSISTED_QUERY_BYTES = 8 * 1024 * 1024;

/**
 * The plugin. Its hook is an async function that returns at once for a request naming no
 * persisted query; it is only called for those that do, which spares every other request a promise.
 */
export function persistedQueriesPlugin(): Plugin {
  const { onParams, ...apq } = useAPQ({ store: createPersistedQueryStore() });
  if (onParams === undefined) throw new Error('@graphql-yoga/plugin-apq no longer reads parameters');
  return {
    ...apq,
    onParams: (payload) => (payload.params.extensions?.persistedQuery == null ? undefined : onParams(payload)),
  };
}

/**
 * The store of automatic persisted queries (clients send a hash instead of a document they sent
 * before), bounded by the bytes of the texts it keeps. A document is only stored once it came
 * with its hash and matched it; the request body limit bounds each one.
 */
function createPersistedQueryStore(maxBytes = PERSISTED_QUERY_BYTES): Cache<string> {
  const texts = new LRUCache<string, string>({
    maxSize: maxBytes,
    sizeCalculation: (text, hash) => Math.max(1, (text.length + hash.length) * 2),
  });
  return {
    get: (hash) => texts.get(hash),
    set(hash, text) {
      if ((text.length + hash.length) * 2 <= maxBytes) texts.set(hash, text);
    },
  };
}
