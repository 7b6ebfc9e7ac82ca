/**
 * What GraphQL documents may cost in memory and stack, whatever a client sends.
 *
 * Parsed documents are cached by their text (Yoga's parser cache, with the caches given here)
 * so a repeated document is parsed and validated once. The cache is bounded by bytes, not by a
 * count: a parsed document near the token limit holds over a megabyte (every token object stays
 * reachable from the AST's locations), so a thousand of them would hold gigabytes. A document
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
 *
 * Before parsing, the text's nesting depth is measured: graphql-js parses recursively, and a
 * document nested a few thousand levels deep overflows the stack. Such a document is a syntax
 * error of the client's, refused before any recursion.
 */
import { createHash } from 'node:crypto';
import { type DocumentNode, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

/** The parsed-document cache holds at most this much, estimated from the documents' text. */
const DOCUMENT_CACHE_BYTES = 32 * 1024 * 1024;

/** Documents remembered as seen once, so that a second sighting is cached. */
const SEEN_ONCE_ENTRIES = 16_384;

/** Automatic persisted queries: the texts kept by their hash, at most this many bytes of them. */
const PERSISTED_QUERY_BYTES = 8 * 1024 * 1024;

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

/**
 * Braces, brackets and parentheses open at once. Legitimate documents nest a few levels
 * (MAX_DEPTH of graphql-armor.ts counts fields; arguments and lists add a few more).
 */
export const MAX_NESTING = 64;

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
  /** Yoga plugin: drops documents that fail validation, refuses documents nested too deep. */
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
      // text's own (a document standing in for a text of its shape, see compiled-by-shape.ts).
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
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        refuseDeepNesting(typeof source === 'string' ? source : source.body);
        return parseFn(source, options);
      });
    },
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

/**
 * Throws a syntax error when brackets nest deeper than MAX_NESTING. Strings (plain and block)
 * and comments are skipped, so a bracket inside them does not count; the scan is linear and
 * allocates nothing.
 */
function refuseDeepNesting(text: string): void {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (char === 0x23 /* # */) {
      while (i < text.length && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i += 1;
    } else if (char === 0x22 /* " */) {
      i = endOfString(text, i);
    } else if (char === 0x7b || char === 0x5b || char === 0x28 /* { [ ( */) {
      depth += 1;
      if (depth > MAX_NESTING) {
        throw new GraphQLError(`Syntax Error: brackets nest more than ${MAX_NESTING} levels deep.`, {
          extensions: { code: 'GRAPHQL_PARSE_FAILED', http: { status: 400 } },
        });
      }
    } else if (char === 0x7d || char === 0x5d || char === 0x29 /* } ] ) */) {
      depth = Math.max(0, depth - 1);
    }
  }
}

/** The index of the closing quote of the string starting at `start` (or the text's end). */
function endOfString(text: string, start: number): number {
  if (text.startsWith('"""', start)) {
    // In a block string only \""" escapes; it does not end the string.
    let end = text.indexOf('"""', start + 3);
    while (end > 0 && text.charCodeAt(end - 1) === 0x5c) end = text.indexOf('"""', end + 3);
    return end < 0 ? text.length : end + 2;
  }
  for (let i = start + 1; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (char === 0x5c /* \ */) i += 1;
    else if (char === 0x22 || char === 0x0a || char === 0x0d) return i;
  }
  return text.length;
}

/**
 * The store of automatic persisted queries (clients send a hash instead of a document they sent
 * before), bounded by the bytes of the texts it keeps. A document is only stored once it came
 * with its hash and matched it; the request body limit bounds each one.
 */
export function createPersistedQueryStore(maxBytes = PERSISTED_QUERY_BYTES): Cache<string> {
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
