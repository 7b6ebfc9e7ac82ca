/**
 * The execution plan: which path answers an operation. Every shortcut of ./ answers exactly what
 * graphql-js's execution would, and falls back to execution at any doubt; this is the one place
 * that says, for an operation (a document and an operation name), which of them may answer it.
 * ../yoga.ts gives each path's plugin only the operations of its path (`onlyOnPath`), and
 * ./prepared-operations.ts asks `preparesQueries` before it lets the transport skip parsing and
 * validation; the transport asks `mayStream` before it parses anything. The map of the paths, with their caches, bounds, fallbacks, rules and tests, is
 * ./README.md.
 *
 * The paths, tried in this order:
 * - `written-answer`: a lone `profile(name: $v)` or `profiles(names: $v)` whose selection reads
 *   the profile alone (./profile-answers.ts): the answer is kept with the cached profile or
 *   written by ./answer-writer.ts; the operation executes, uncompiled, only where writing fails.
 * - `execute` because it is a subscription: it runs once per client and stays open.
 * - `compiled-by-shape`: a document with string literals, while its shape is not known to be
 *   uncompilable (./compiled-by-shape.ts): one compiled plan for every text of the shape, after
 *   COMPILE_AFTER_EXECUTIONS executions of the shape; executed until then.
 * - `compiled`: any other document, compiled on its COMPILE_AFTER_EXECUTIONS-th execution while
 *   the document cache holds it and has room (../yoga.ts, ./document-cache.ts); executed until then.
 * - `execute` because compiled execution is off (tests compare answers without it).
 */
import { type DocumentNode, type GraphQLSchema, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { CompiledByShape } from './compiled-by-shape.js';
import type { ProfileAnswers } from './profile-answers.js';
import { stringLiteralsAreContentFree } from './validation-by-shape.js';

/** Which path answers an operation. */
export type ExecutionPath =
  | { readonly kind: 'written-answer' }
  | { readonly kind: 'compiled-by-shape' }
  | { readonly kind: 'compiled' }
  | { readonly kind: 'execute'; readonly because: 'subscription' | 'compiled execution off' };

export type ExecutionPathKind = ExecutionPath['kind'];

const WRITTEN_ANSWER: ExecutionPath = Object.freeze({ kind: 'written-answer' });
const COMPILED_BY_SHAPE: ExecutionPath = Object.freeze({ kind: 'compiled-by-shape' });
const COMPILED: ExecutionPath = Object.freeze({ kind: 'compiled' });
const SUBSCRIPTION: ExecutionPath = Object.freeze({ kind: 'execute', because: 'subscription' });
const COMPILED_EXECUTION_OFF: ExecutionPath = Object.freeze({ kind: 'execute', because: 'compiled execution off' });

/** The hooks prepared operations skip (./prepared-operations.ts): parameters, parse and validate. */
export const HOOKS_PREPARED_OPERATIONS_SKIP = ['onParams', 'onParse', 'onValidate'] as const;

export interface ExecutionPlan {
  /** The path that answers the operation `operationName` of `document`. */
  pathOf(document: DocumentNode, operationName: string | null | undefined): ExecutionPath;
  /**
   * Whether a query that ran whole once may run again without Yoga's parameter, parse and
   * validate hooks: false when a plugin beyond the service's own has one of them, since it
   * would be skipped (./prepared-operations.ts).
   */
  readonly preparesQueries: boolean;
  /**
   * Before anything is parsed (the transport's question, ../transport/over-http.ts): whether the
   * answer to a request with this `query` may be a stream, so that only Yoga's handler may write
   * it. True for a text with the word `subscription` anywhere (a cheap superset of the documents
   * with a subscription operation) and for a hash-only persisted query, whose text is not known yet.
   */
  mayStream(params: { readonly query?: string | null }): boolean;
}

export interface ExecutionPlanParts {
  schema: GraphQLSchema;
  /** The kept and written profile answers, unless off. */
  answers: ProfileAnswers | undefined;
  /** Compiled execution by shape; undefined when compiled execution is off. */
  byShape: CompiledByShape | undefined;
  /** Yoga plugins beyond the service's own (../yoga.ts's `plugins`). */
  extraPlugins: readonly Plugin[];
}

/** What is known of an operation without counting: the path, or `shape` for a document of string literals. */
type Known = ExecutionPath | 'shape';

export function executionPlan({ schema, answers, byShape, extraPlugins }: ExecutionPlanParts): ExecutionPlan {
  // A shape stands for texts that differ in their literals' values; a custom input scalar could
  // accept one and refuse another (./validation-by-shape.ts), so none may be compiled by shape.
  const byShapeAllowed = byShape !== undefined && stringLiteralsAreContentFree(schema) ? byShape : undefined;
  // By operation name; null for none (which differs from the name '', an operation no document has).
  const known = new WeakMap<DocumentNode, Map<string | null, Known>>();
  const knownOf = (document: DocumentNode, operationName: string | null | undefined): Known => {
    let byOperation = known.get(document);
    if (byOperation === undefined) {
      byOperation = new Map();
      known.set(document, byOperation);
    }
    const name = operationName ?? null;
    let path = byOperation.get(name);
    if (path === undefined) {
      path = decide(document, operationName);
      byOperation.set(name, path);
    }
    return path;
  };
  const decide = (document: DocumentNode, operationName: string | null | undefined): Known => {
    if (answers?.plans(document, operationName) === true) return WRITTEN_ANSWER;
    if (byShape === undefined) return COMPILED_EXECUTION_OFF;
    if (getOperationAST(document, operationName)?.operation === 'subscription') return SUBSCRIPTION;
    return byShapeAllowed?.hasShape(document) === true ? 'shape' : COMPILED;
  };
  return {
    pathOf(document, operationName) {
      const path = knownOf(document, operationName);
      if (path !== 'shape') return path;
      // A shape found not to compile (a mutation, a block string…) is compiled document by document.
      return byShapeAllowed?.takes(document, operationName) === true ? COMPILED_BY_SHAPE : COMPILED;
    },
    preparesQueries: !extraPlugins.some(hasHookPreparedOperationsSkip),
    mayStream: ({ query }) => query == null || SUBSCRIPTION_WORD.test(query),
  };
}

const SUBSCRIPTION_WORD = /\bsubscription\b/;

/** Whether `plugin` has a hook that prepared operations would skip. */
function hasHookPreparedOperationsSkip(plugin: Plugin): boolean {
  return HOOKS_PREPARED_OPERATIONS_SKIP.some((hook) => plugin[hook] !== undefined);
}

/**
 * `plugin` with its `onExecute` hook run only for operations of the path `kind`: the plan, not the
 * plugin, says which operations a path takes. Its other hooks are left as they are.
 */
export function onlyOnPath<Context extends Record<string, unknown>>(
  plan: ExecutionPlan,
  kind: ExecutionPathKind,
  plugin: Plugin<Context>,
): Plugin<Context> {
  const { onExecute } = plugin;
  if (onExecute === undefined) return plugin;
  return {
    ...plugin,
    onExecute(payload) {
      if (plan.pathOf(payload.args.document, payload.args.operationName).kind !== kind) return;
      return onExecute(payload);
    },
  };
}
