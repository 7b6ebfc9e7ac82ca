/**
 * Compiled execution by shape: every query that differs from another only in its string literals
 * (a name written into each document: a new text, and a new parsed document, per request) runs
 * one compiled plan (graphql-jit). Compiling per document object cannot serve them, as none of
 * them is executed twice.
 *
 * Executions are counted per shape and operation; on the COMPILE_AFTER_EXECUTIONS-th, the
 * document at hand is hoisted (./literal-hoisting.ts: its string literals become variables) and
 * compiled, and the plan is kept in the document cache's byte bound (document-cache.ts), counted
 * like a document's compiled query. From then on a document of that shape runs the plan, with
 * the client's variables and its own literals as the hoisted variables' values. Its answer is the
 * one uncompiled execution would give:
 * - error locations are moved from the document the plan was compiled from to the one executed
 *   (./literal-locations.ts);
 * - variables of the client's that do not coerce are answered by uncompiled execution
 *   (./refused-variables.ts);
 * - literal `@skip`/`@include` conditions are decided when hoisting, and operations whose errors
 *   graphql-jit would report otherwise (./jit-error-parity.ts) are not compiled.
 * A shape that is not compiled (a mutation, a block string, a literal outside a field argument, a
 * condition on a variable, errors as above, a plan that would not fit) is left to compiled
 * execution per document, as are documents without string literals.
 *
 * A text of a compiled shape is not even parsed (parsing, and the garbage of a parsed document,
 * was most of what such a request still cost): graphql-js's lexer reads its shape and literals
 * (./document-shape.ts), and the document the plan was compiled from is given as its parse.
 * The two differ only in the values and places of their string literals, and until execution
 * nothing reads those: validation's verdict and the document limits depend on the structure alone
 * (the shape was valid, and has the same tokens), the other plugins read operation and root field
 * names. Execution runs the plan with the text's own literals, or, should the plan be gone or the
 * variables refused, executes the text's own parse. The document cache never keeps a document given so.
 */
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type ParseOptions,
  parse,
} from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin, PromiseOrValue } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { COMPILE_AFTER_EXECUTIONS, type DocumentCaches } from './document-cache.js';
import { type DocumentShape, type Literal, shapeOf, textShape } from './document-shape.js';
import { jitErrorsMatch } from './jit-error-parity.js';
import { type HoistedVariable, hoistLiterals } from './literal-hoisting.js';
import { relocatedErrors } from './literal-locations.js';
import { errorsFirst, refusedBeforeRunning } from './refused-variables.js';

/** A compiled query that answers every document of one shape, given its literals. */
export interface ShapePlan {
  run(rootValue: unknown, contextValue: unknown, variables: Record<string, unknown>): PromiseOrValue<ExecutionResult>;
  /** The variables that stand for literals. */
  variables: readonly HoistedVariable[];
  /** The document the plan was compiled from; it is given as the parse of the texts of its shape. */
  document: DocumentNode;
  /** Its literals (the plan's error locations are in it). */
  literals: readonly Literal[];
}

/** Executions counted for shapes not compiled yet, at most this many bytes of their keys. */
const COUNTED_SHAPE_BYTES = 4 * 1024 * 1024;

/** What is known of a shape that has no plan. */
interface ShapeCount {
  executions: number;
  /** False once the shape was found not hoistable, or too large to compile. */
  compilable: boolean;
}

/**
 * A parse skipped: the plan's document was given to Yoga as the parse of `text` (whose shape is
 * `shape`), and what parsing `text` itself needs should execution want the text's own document.
 */
interface SkippedParse {
  document: DocumentNode;
  shape: DocumentShape;
  text: string;
  options: ParseOptions | undefined;
}

/** Where a request's context keeps its skipped parse. */
const SKIPPED_PARSE = Symbol('compiled-by-shape skipped parse');

type SkippedParseContext = {
  [SKIPPED_PARSE]?: SkippedParse;
};

export interface CompiledByShape {
  plugin: Plugin<SkippedParseContext>;
  /** Whether `document` has a shape (a string literal): the documents this plugin may take. */
  hasShape(document: DocumentNode): boolean;
  /** Whether documents of the shape of `document` run by shape, and not compiled one by one. */
  takes(document: DocumentNode, operationName: string | null | undefined): boolean;
}

export function compiledExecutionByShape(
  schema: GraphQLSchema,
  documents: Pick<DocumentCaches<ShapePlan>, 'plans' | 'holds'>,
  countedBytes = COUNTED_SHAPE_BYTES,
): CompiledByShape {
  const { plans } = documents;
  const counts = new LRUCache<string, ShapeCount>({
    maxSize: countedBytes,
    sizeCalculation: (_count, key) => key.length * 2 + 64,
  });

  const planFor = (shape: DocumentShape, document: DocumentNode, operationName: string | null | undefined) => {
    const key = planKey(shape, operationName);
    const plan = plans.get(key);
    if (plan !== undefined) return plan;
    let count = counts.get(key);
    if (count === undefined) {
      count = { executions: 0, compilable: true };
      counts.set(key, count);
    }
    if (!count.compilable) return undefined;
    count.executions += 1;
    if (count.executions < COMPILE_AFTER_EXECUTIONS) return undefined;
    const characters = document.loc?.source.body.length ?? 0;
    const compiled = plans.fits(characters) ? compilePlan(schema, document, operationName) : undefined;
    if (compiled === undefined) {
      count.compilable = false;
      return undefined;
    }
    plans.set(key, compiled, characters);
    // Should the plan be evicted, the shape is counted anew, as an evicted document is.
    counts.delete(key);
    return compiled;
  };

  const plugin: Plugin<SkippedParseContext> = {
    onParse({ params, context, extendContext, setParsedDocument }) {
      const text = typeof params.source === 'string' ? params.source : params.source.body;
      // Texts without a string, and texts parsed before, are left to the parser and its cache.
      if (!text.includes('"') || documents.holds(text)) return;
      const shape = textShape(text);
      const plan = shape === undefined ? undefined : plans.get(planKey(shape, context.params.operationName));
      if (shape === undefined || plan === undefined) return;
      const skipped: SkippedParse = { document: plan.document, shape, text, options: params.options };
      extendContext({ [SKIPPED_PARSE]: skipped });
      setParsedDocument(plan.document);
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      const skipped = skippedParseOf(args);
      const shape = skipped?.shape ?? shapeOf(args.document);
      if (shape === undefined) return;
      // What uncompiled execution runs: the text's own parse, where its parse was skipped.
      const uncompiled =
        skipped === undefined
          ? executeFn
          : (executionArgs: ExecutionArgs) =>
              executeFn({ ...executionArgs, document: parse(skipped.text, skipped.options) });
      const plan = planFor(shape, args.document, args.operationName);
      if (plan !== undefined) setExecuteFn((executionArgs) => runPlan(plan, shape, executionArgs, uncompiled));
      else if (skipped !== undefined) setExecuteFn(uncompiled);
    },
  };

  return {
    plugin,
    hasShape: (document) => shapeOf(document) !== undefined,
    takes(document, operationName) {
      const shape = shapeOf(document);
      return shape !== undefined && counts.peek(planKey(shape, operationName))?.compilable !== false;
    },
  };
}

/** The request's skipped parse, when the document executed is the plan's document given for it. */
function skippedParseOf(args: ExecutionArgs): SkippedParse | undefined {
  const skipped = (args.contextValue as SkippedParseContext | undefined)?.[SKIPPED_PARSE];
  return skipped?.document === args.document ? skipped : undefined;
}

/** Operation names hold no NUL character and shapes do not start with one: keys never meet. */
function planKey(shape: DocumentShape, operationName: string | null | undefined): string {
  return operationName == null ? shape.text : `${operationName}\u0000${shape.text}`;
}

function compilePlan(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): ShapePlan | undefined {
  const literals = shapeOf(document)?.literals ?? [];
  const hoisted = hoistLiterals(schema, document, operationName, literals);
  if (hoisted === undefined || !jitErrorsMatch(schema, hoisted.document, hoisted.operation)) return undefined;
  const compiled = compileQuery(schema, hoisted.document, operationName ?? undefined);
  if (!isCompiledQuery(compiled)) return undefined;
  return { run: compiled.query, variables: hoisted.variables, document, literals };
}

function runPlan(
  plan: ShapePlan,
  shape: DocumentShape,
  args: ExecutionArgs,
  uncompiled: (args: ExecutionArgs) => PromiseOrValue<ExecutionResult>,
): PromiseOrValue<ExecutionResult> {
  const variables: Record<string, unknown> = { ...args.variableValues };
  for (const { name, literal } of plan.variables) variables[name] = shape.literals[literal]?.value;
  const answer = (result: ExecutionResult): PromiseOrValue<ExecutionResult> => {
    if (refusedBeforeRunning(result)) return uncompiled(args);
    if (result.errors === undefined) return result;
    return errorsFirst({ ...result, errors: relocatedErrors(result.errors, plan.literals, shape.literals) });
  };
  const result = plan.run(args.rootValue, args.contextValue, variables);
  return result instanceof Promise ? result.then(answer) : answer(result);
}
