/**
 * Prepared operations: a query that ran once through Yoga's whole path runs again without the
 * steps whose outcome is already known. Yoga's `getResultForParams` calls, for every request, the
 * `onParams` hooks, then envelop's parse (its `onParse` hooks, whose parser cache answers a known
 * text), validate (its `onValidate` hooks; graphql-armor's add their rules again and Yoga's
 * validation cache builds its key from the names of all rules before it answers), the context and
 * execute, each step chained through promise helpers. For a document in the document cache that
 * executed before as a query, the first three decide nothing new: the text parses to the cached
 * document, the document passed validation (it executed), and the parameter hooks of this server
 * act only on `extensions` (persisted queries, ../transport/request-mistakes.ts), which a prepared
 * request does not have, or are Yoga's parameter check, which ../transport/over-http.ts applies
 * before it comes here (`checkedParams`), or are the trusted-documents hook, whose two decisions
 * the transport takes itself before it asks here: a `documentId` becomes its manifest text
 * (`trusted.asRun`), and a documents-only key's `query` is never looked up
 * (../transport/trusted-documents.ts). So such a request gets its context and is executed
 * through the same envelop instance, with every `onContextBuilding` and `onExecute` hook (error
 * masking, operation metrics, HTTP caching, compiled execution, tracing): what Yoga's
 * `handleParams` and `processRequest` do after validation (`server.js`, `process-request.js`).
 * The `onExecute` hooks run through ./execute-hooks.ts, which calls them as envelop does without
 * its per-request payloads and promise chains.
 *
 * What is learned: (document, operation name) pairs whose result had `data` (graphql-js and
 * graphql-jit leave it out when nothing executed: a document, variables or operation refused) and
 * whose operation is a query (mutations are refused over GET by a parse hook of Yoga's, which
 * must keep running; subscriptions stream). Entries are kept by the cached document, so they go
 * when the document cache evicts it. The transport README lists this as a piece that mirrors Yoga.
 *
 * Nothing is prepared when the execution plan says so (./execution-plan.ts, `preparesQueries`):
 * a plugin given beyond the service's own with a parameter, parse or validate hook would be
 * skipped. The service's own such hooks are the ones counted in
 * test/graphql-execution-plan.test.ts, each checked as above.
 */

import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { PromiseOrValue } from 'graphql-yoga';
import type { Cache } from './document-cache.js';
import type { ExecuteStage } from './execute-hooks.js';
import type { ExecutionPlan } from './execution-plan.js';

/** The GraphQL parameters of a request, as the transport read and checked them. */
export interface OperationParams {
  query?: string;
  variables?: Record<string, unknown>;
  operationName?: string | null;
  extensions?: Record<string, unknown>;
}

/** What envelop gives Yoga for one request (`yoga.getEnveloped(context)`), as far as used here. */
interface Enveloped {
  schema: unknown;
  contextFactory(): PromiseOrValue<unknown>;
  execute(args: {
    schema: never;
    document: DocumentNode;
    contextValue: unknown;
    variableValues?: Record<string, unknown>;
    operationName?: string | null;
  }): PromiseOrValue<unknown>;
}

export interface PreparedOperationsDeps {
  /**
   * The execution plan (./execution-plan.ts): when a plugin beyond the service's own has a
   * parameter, parse or validate hook, which a prepared request would skip, nothing is prepared.
   */
  plan: Pick<ExecutionPlan, 'preparesQueries'>;
  /** The parsed-document cache Yoga's parser cache reads (./document-cache.ts). */
  documents: Cache<DocumentNode>;
  /** Yoga's envelop for a request's context (`yoga.getEnveloped`). */
  getEnveloped(context: RequestContext): Enveloped;
  /**
   * Envelop's execute stage without envelop's per-request machinery (./execute-hooks.ts), when
   * the plugins allow it; absent, the request's envelop executes.
   */
  execute?: ExecuteStage;
  /**
   * The answer to an error thrown while the context is built or the operation executed: Yoga's
   * `handleParams` answers it with the masked error (`handleError`).
   */
  answerError(error: unknown): ExecutionResult;
}

/** The server context of a request, which Yoga's `handleParams` gives the request and parameters. */
export interface RequestContext {
  request?: unknown;
  params?: OperationParams;
}

/** Operation names are never NUL: the key of an operation without a name. */
const UNNAMED = '\u0000';

const keyOf = (operationName: string | null | undefined): string => operationName ?? UNNAMED;

export class PreparedOperations {
  readonly #deps: PreparedOperationsDeps;
  readonly #queries = new WeakMap<DocumentNode, Set<string>>();

  constructor(deps: PreparedOperationsDeps) {
    this.#deps = deps;
  }

  /** The cached document of a request that may run prepared; undefined for any other. */
  find(params: OperationParams): DocumentNode | undefined {
    if (params.extensions != null || params.query == null || !this.#deps.plan.preparesQueries) return undefined;
    const document = this.#deps.documents.get(params.query);
    if (document === undefined) return undefined;
    return this.#queries.get(document)?.has(keyOf(params.operationName)) === true ? document : undefined;
  }

  /** Notes the outcome of a request Yoga ran whole (`getResultForParams`). */
  learn(params: OperationParams, result: unknown): void {
    if (params.query == null || !this.#deps.plan.preparesQueries || !executed(result)) return;
    const document = this.#deps.documents.get(params.query);
    if (document === undefined) return;
    if (getOperationAST(document, params.operationName)?.operation !== 'query') return;
    let names = this.#queries.get(document);
    if (names === undefined) {
      names = new Set();
      this.#queries.set(document, names);
    }
    names.add(keyOf(params.operationName));
  }

  /**
   * Runs a document `find` gave: Yoga's `handleParams` (the request and parameters join the
   * server context) and `processRequest` after validation (context, then execute).
   */
  run(
    document: DocumentNode,
    params: OperationParams,
    request: unknown,
    context: RequestContext,
  ): PromiseOrValue<ExecutionResult> {
    const { answerError, execute: stage } = this.#deps;
    try {
      // Stores, as Yoga's `Object.assign` of both: the context has their slots (../yoga.ts).
      if (context.request !== request) context.request = request;
      context.params = params;
      const enveloped = this.#deps.getEnveloped(context);
      const run = stage ?? enveloped.execute;
      const execute = (contextValue: unknown) =>
        run({
          schema: enveloped.schema as never,
          document,
          contextValue,
          variableValues: params.variables,
          operationName: params.operationName,
        }) as PromiseOrValue<ExecutionResult>;
      const contextValue = enveloped.contextFactory();
      const result = contextValue instanceof Promise ? contextValue.then(execute) : execute(contextValue);
      return result instanceof Promise ? result.catch(answerError) : result;
    } catch (error) {
      return answerError(error);
    }
  }
}

/** Whether execution ran: graphql-js leaves `data` out when it refused before running anything. */
function executed(result: unknown): boolean {
  return typeof result === 'object' && result !== null && 'data' in result && !(Symbol.asyncIterator in result);
}
