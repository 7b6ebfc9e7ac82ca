/**
 * What GraphQL documents may cost in memory, whatever a client sends: the document cache.
 *
 * Parsed documents are cached by their text (Yoga's parser cache, with the caches given here)
 * so a repeated document is parsed and validated once. The cache is bounded by bytes, not by a
 * count: a parsed document near the token limit holds far more heap than its text (every token
 * object stays reachable from the AST's locations), so a bound by count would bound nothing. A document
 * that fails validation is dropped from the cache at once, and failed parses are never cached,
 * so a rejected document costs nothing after its answer. A document is only kept once it was
 * seen twice: one-off documents (a name written into each document, say) would otherwise fill
 * the cache with texts that never come back, and the heap with their garbage.
 *
 * Documents executed often run compiled (graphql-jit), and a compiled query is far larger than
 * the parsed document, in proportion to its text. So a document is compiled only while it is in
 * the cache, its entry then counts the compiled size too (evicting it drops both), and a document
 * whose compiled query would take more than a sixteenth of the cache is never compiled. Without
 * this, a client sending distinct documents of many aliased lookups filled the heap with compiled
 * queries (the figures: docs/decisions.md, "The document cache, bounded by bytes").
 * Plans compiled for a shape (every document that differs only in its string literals, see
 * src/graphql/execution/compiled-by-shape.ts) are entries of the same cache, counted the same way: parsed
 * documents and compiled queries of both kinds share one bound.
 * The stack a document may cost is ./nesting-limit.ts's; the persisted-query store is
 * ../transport/persisted-queries.ts.
 */
import { createHash } from 'node:crypto';
import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

/** The parsed-document cache holds at most this much, estimated from the documents' text. */
const DOCUMENT_CACHE_BYTES = 32 * 1024 * 1024;

/** Documents remembered as seen once, so that a second sighting is cached. */
const SEEN_ONCE_ENTRIES = 16_384;

/**
 * Bytes of heap per character of document text, measured with `process.memoryUsage()` on
 * documents of aliased fields near the token limit, rounded up (docs/decisions.md, "The document
 * cache, bounded by bytes").
 */
const HEAP_BYTES_PER_DOCUMENT_CHARACTER = 64;

/** Heap of a parsed document beyond its characters, as measured on short documents. */
const HEAP_BYTES_PER_DOCUMENT = 4096;

/** Heap of a compiled query per character of its document's text: the measured figure, rounded up. */
export const COMPILED_BYTES_PER_DOCUMENT_CHARACTER = 640;

/** A document runs compiled from this execution on: compiling costs more than one run saves. */
export const COMPILE_AFTER_EXECUTIONS = 16;

/** Heap a parsed document of `text` holds, as the cache counts it. */
export function parsedDocumentBytes(text: string): number {
  return parsedBytes(text.length);
}

function parsedBytes(characters: number): number {
  return characters * HEAP_BYTES_PER_DOCUMENT_CHARACTER + HEAP_BYTES_PER_DOCUMENT;
}

export interface Cache<T> {
  get(key: string): T | undefined;
  set(key: string, value: T): void;
}

/** Compiled plans kept by a key of their own, in the document cache's bound. */
interface PlanCache<Plan> {
  get(key: string): Plan | undefined;
  /** Whether a plan compiled from a document of `characters` characters may be kept at all. */
  fits(characters: number): boolean;
  /** Keeps `plan`, compiled from a document of `characters` characters, if it fits. */
  set(key: string, plan: Plan, characters: number): void;
}

export interface DocumentCaches<Plan extends object = object> {
  /** For Yoga's `parserAndValidationCache` option. */
  options: { documentCache: Cache<DocumentNode>; errorCache: Cache<unknown>; validationCache: true };
  /** Yoga plugin: drops documents that fail validation. */
  plugin: Plugin;
  /**
   * Whether `document` may run compiled: it is in the cache and its compiled query fits, and
   * from now on its entry counts the compiled size as well.
   */
  reserveCompiled(document: DocumentNode): boolean;
  /** Plans compiled for documents of one shape, counted like the documents' compiled queries. */
  plans: PlanCache<Plan>;
  /** Whether the parsed document of `text` is cached (without counting as a use). */
  holds(text: string): boolean;
  /** The cache's estimated size in bytes (for tests and metrics). */
  estimatedBytes(): number;
}

/** A plan in the document cache; documents are kept as they are. */
interface PlanEntry<Plan> {
  plan: Plan;
}

/**
 * Plans are kept under keys that start with a NUL character, and no document that parses starts
 * with one (outside a string it is a syntax error), so a document never replaces a plan; a client
 * sending such a key as its text gets no document from the cache.
 */
const PLAN_KEY_PREFIX = '\u0000';

/** The heap of a compiled query, as the cache counts it. */
export function compiledQueryBytes(characters: number): number {
  return characters * COMPILED_BYTES_PER_DOCUMENT_CHARACTER;
}

export function createDocumentCaches<Plan extends object = object>(
  maxBytes = DOCUMENT_CACHE_BYTES,
): DocumentCaches<Plan> {
  const documents = new LRUCache<string, DocumentNode | PlanEntry<Plan>>({
    maxSize: maxBytes,
    sizeCalculation: (_document, text) => parsedDocumentBytes(text),
  });
  const documentAt = (text: string): DocumentNode | undefined => {
    const entry = documents.get(text);
    return entry !== undefined && 'kind' in entry ? entry : undefined;
  };
  const compiled = new WeakSet<DocumentNode>();
  // Digests of documents parsed once: a count bounds them, as they are small whatever the text.
  const seenOnce = new LRUCache<string, true>({ max: SEEN_ONCE_ENTRIES });
  const textOf = new WeakMap<DocumentNode, string>();
  const documentCache: Cache<DocumentNode> = {
    get: documentAt,
    set(text, document) {
      // A document too large for the whole cache is not kept at all, nor one that is not this
      // text's own (a plan's document given as the parse of a text of its shape, see compiled-by-shape.ts).
      if (parsedDocumentBytes(text) > maxBytes || document.loc?.source.body !== text) return;
      const digest = createHash('sha256').update(text).digest('base64url');
      if (!seenOnce.has(digest)) {
        seenOnce.set(digest, true);
        return;
      }
      seenOnce.delete(digest);
      documents.set(text, document);
      textOf.set(document, text);
    },
  };
  const errorCache: Cache<unknown> = { get: () => undefined, set: () => {} };

  const plugin: Plugin = {
    onValidate({ params }) {
      return ({ valid }) => {
        if (valid) return;
        const text = textOf.get(params.documentAST);
        if (text !== undefined) documents.delete(text);
      };
    },
  };

  // A compiled query may take a sixteenth of the cache, so one client's few large documents
  // cannot push every other entry out.
  const fits = (characters: number): boolean => compiledQueryBytes(characters) <= maxBytes / 16;

  const plans: PlanCache<Plan> = {
    get(key) {
      const entry = documents.get(PLAN_KEY_PREFIX + key);
      return entry !== undefined && 'plan' in entry ? entry.plan : undefined;
    },
    fits,
    set(key, plan, characters) {
      if (!fits(characters)) return;
      // A plan holds the document it was compiled from (its fields are the plan's error locations).
      const size = parsedBytes(characters) + compiledQueryBytes(characters) + key.length * 2;
      documents.set(PLAN_KEY_PREFIX + key, { plan }, { size });
    },
  };

  const reserveCompiled = (document: DocumentNode): boolean => {
    if (compiled.has(document)) return true;
    const text = textOf.get(document);
    if (text === undefined || documents.peek(text) !== document) return false;
    const compiledBytes = compiledQueryBytes(text.length);
    if (!fits(text.length)) return false;
    // lru-cache keeps the old size when a key is set to the value it holds: set it anew.
    documents.delete(text);
    documents.set(text, document, { size: parsedDocumentBytes(text) + compiledBytes });
    compiled.add(document);
    return true;
  };

  return {
    options: { documentCache, errorCache, validationCache: true },
    plugin,
    reserveCompiled,
    plans,
    holds: (text) => {
      const entry = documents.peek(text);
      return entry !== undefined && 'kind' in entry;
    },
    estimatedBytes: () => documents.calculatedSize,
  };
}
