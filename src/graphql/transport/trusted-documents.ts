/**
 * Trusted documents (GraphQL-over-HTTP, Appendix A "Persisted Documents"): a request may carry
 * `documentId` (`sha256:<hex>`) instead of `query`, and the document comes from the manifests of
 * PERSISTED_DOCUMENTS (src/config/persisted-documents.ts). Built on Yoga's persisted-operations
 * plugin (@graphql-yoga/plugin-persisted-operations): its `onParams` hook replaces the id with the
 * document's text, so everything after it (parse and validation caches, limits, compiled
 * execution, metrics) sees the same parameters as for that text sent as `query`.
 *
 * Around the plugin:
 * - It runs only for requests that name a `documentId`, or that come with a documents-only API
 *   key: other requests (a `query`, an APQ hash) pass untouched, so automatic persisted queries
 *   (`extensions.persistedQuery`, the plugin after this one) work as before.
 * - A `query` and a `documentId` together are refused (400): which one should run is a guess.
 *   An empty `query` counts as none, as Yoga's parsers read an empty parameter.
 * - A documents-only key (`keys create --documents-only`) gets the plugin with arbitrary
 *   operations refused: a `query`, or an APQ hash, is a 400 with PERSISTED_DOCUMENTS_ONLY. The key
 *   is the one the API-key guard checked for the request (src/http/api-key-guard.ts), so a change
 *   of the flag holds like a revocation (the key cache is emptied when it commits).
 * - An unknown id is a 400 with PERSISTED_QUERY_NOT_FOUND.
 *
 * The hook runs on both GraphQL HTTP paths (Yoga's `onParams` stage) and, called here, for each
 * graphql-ws operation (./websocket.ts), which has no `onParams` stage. ./over-http.ts asks
 * `asRun` for the parameters the hook would make, so a document sent by id runs prepared like the
 * same text sent as `query` (./README.md, "Trusted documents").
 */
import type { IncomingMessage } from 'node:http';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { GraphQLError } from 'graphql';
import { createGraphQLError, type GraphQLParams, type OnParamsEventPayload, type Plugin } from 'graphql-yoga';
import type { PersistedDocuments } from '../../config/persisted-documents.js';
import { apiKeyOf } from '../../http/api-key-guard.js';

const PERSISTED_QUERY_NOT_FOUND = 'PERSISTED_QUERY_NOT_FOUND';
const PERSISTED_DOCUMENTS_ONLY = 'PERSISTED_DOCUMENTS_ONLY';
const PERSISTED_DOCUMENTS_ONLY_MESSAGE = 'This API key may run only persisted documents';
const UNKNOWN_DOCUMENT_MESSAGE = 'No persisted document has this documentId';
const QUERY_AND_DOCUMENT_ID_MESSAGE = 'Send either query or documentId, not both';

/** GraphQL parameters with the appendix's `documentId`. */
interface TrustedParams extends GraphQLParams {
  documentId?: unknown;
}

/** A graphql-ws `subscribe` payload (its optional members may be null). */
interface SocketParams {
  query?: string;
  documentId?: unknown;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  extensions?: Record<string, unknown> | null;
}

/** What the hook reads of a request's server context: the Node request its API key rides on. */
interface KeyedContext {
  req?: IncomingMessage;
}

/** A refusal before execution: 400 whatever media type the client accepts. */
const refusal = (code: string) => ({ extensions: { code, http: { status: 400 } } });

const documentsOnlyError = { message: PERSISTED_DOCUMENTS_ONLY_MESSAGE, ...refusal(PERSISTED_DOCUMENTS_ONLY) };

export interface TrustedDocuments {
  /** The Yoga plugin (before the APQ plugin: a documents-only key must not register documents). */
  readonly plugin: Plugin;
  /**
   * The parameters the hook would give a request by a known id (the document's text as `query`,
   * no `documentId`), for the service's prepared path; `params` itself for any other request.
   */
  asRun<P extends TrustedParams>(params: P): P | GraphQLParams;
  /** Whether the request's API key may run only persisted documents. */
  documentsOnly(req: IncomingMessage | undefined): boolean;
  /** A graphql-ws operation's parameters through the hook: those to run, or the errors refusing it. */
  forSocket(params: SocketParams, req: IncomingMessage): Promise<GraphQLParams | readonly GraphQLError[]>;
}

export function trustedDocuments(documents: PersistedDocuments): TrustedDocuments {
  const options = {
    extractPersistedOperationId: (params: TrustedParams) =>
      typeof params.documentId === 'string' ? params.documentId : null,
    getPersistedOperation: (id: string) => documents.get(id) ?? null,
    customErrors: {
      notFound: { message: UNKNOWN_DOCUMENT_MESSAGE, ...refusal(PERSISTED_QUERY_NOT_FOUND) },
      persistedQueryOnly: documentsOnlyError,
      keyNotFound: documentsOnlyError,
    },
  };
  const byId = onParamsOf(usePersistedOperations({ ...options, allowArbitraryOperations: true }));
  const onlyById = onParamsOf(usePersistedOperations({ ...options, allowArbitraryOperations: false }));
  const documentsOnly = (req: IncomingMessage | undefined) =>
    req !== undefined && apiKeyOf(req)?.documentsOnly === true;

  const onParams = (payload: OnParamsEventPayload<KeyedContext>) => {
    const params = payload.params as TrustedParams;
    if (params.documentId == null) return documentsOnly(payload.context.req) ? onlyById(payload) : undefined;
    if (typeof params.documentId !== 'string') {
      throw createGraphQLError('Expected "documentId" param to be a string', refusal('BAD_REQUEST'));
    }
    if (params.query) throw createGraphQLError(QUERY_AND_DOCUMENT_ID_MESSAGE, refusal('BAD_REQUEST'));
    return byId(payload);
  };

  return {
    plugin: { onParams } as Plugin,
    asRun(params) {
      if (typeof params.documentId !== 'string' || params.query != null) return params;
      const query = documents.get(params.documentId);
      if (query === undefined) return params;
      // The object the plugin's `setParams` makes.
      return { query, operationName: params.operationName, variables: params.variables, extensions: params.extensions };
    },
    documentsOnly,
    async forSocket(params, req) {
      let run: GraphQLParams = params as GraphQLParams;
      const payload = {
        params,
        request: undefined,
        context: { req },
        setParams: (next: GraphQLParams) => {
          run = next;
        },
      } as unknown as OnParamsEventPayload<KeyedContext>;
      try {
        await onParams(payload);
      } catch (error) {
        if (error instanceof GraphQLError) return [error];
        throw error;
      }
      return run;
    },
  };
}

/** The plugin's one hook this file calls (it has parse and validate hooks only for documents given as ASTs). */
function onParamsOf(plugin: Plugin): (payload: OnParamsEventPayload<KeyedContext>) => unknown {
  const { onParams } = plugin as { onParams?: (payload: OnParamsEventPayload<KeyedContext>) => unknown };
  if (onParams === undefined) throw new Error('@graphql-yoga/plugin-persisted-operations no longer reads parameters');
  return onParams;
}
