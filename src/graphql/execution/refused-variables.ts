/**
 * Variables a compiled query refuses. graphql-jit coerces the variables before it runs any
 * resolver and, when they do not coerce (a required one missing, a string for an Int), answers
 * errors without data, in its own words and without the extensions the service's error masking
 * reads (such answers came out as INTERNAL_SERVER_ERROR). That answer is dropped and the document
 * executed uncompiled, which refuses the variables in graphql-js's words (BAD_USER_INPUT, 400):
 * nothing ran, so nothing runs twice. A query graphql-jit failed to compile answers the same way,
 * and is executed uncompiled too.
 *
 * An answer with errors has them first, as graphql-js builds its answers (graphql-jit puts `data`
 * first): a document's answer is then the same text, and a GET's the same ETag, before and after
 * it is compiled.
 */

import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { PromiseOrValue } from 'graphql-yoga';

type Execute = (args: ExecutionArgs) => PromiseOrValue<ExecutionResult>;

/** Whether a compiled query answered without running anything. */
export function refusedBeforeRunning(result: ExecutionResult): boolean {
  return !('data' in result);
}

/** The result with its errors first, as graphql-js orders an answer. */
export function errorsFirst(result: ExecutionResult): ExecutionResult {
  if (result.errors === undefined) return result;
  const { errors, data, ...rest } = result;
  return { errors, data, ...rest };
}

/** `compiled`, whose refusals are answered by `uncompiled`, and whose errors come first. */
export function uncompiledWhenRefused(compiled: Execute, uncompiled: Execute): Execute {
  return (args) => {
    const answer = (result: ExecutionResult) => (refusedBeforeRunning(result) ? uncompiled(args) : errorsFirst(result));
    const result = compiled(args);
    return result instanceof Promise ? result.then(answer) : answer(result);
  };
}
