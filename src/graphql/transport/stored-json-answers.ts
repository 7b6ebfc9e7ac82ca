/**
 * Answers write stored record values as their stored text: every result Yoga's result processors
 * serialise (`result.stringify`, which Yoga's JSON, SSE and multipart processors call when a result
 * has one) goes through `stringifyKeepingStoredJson` (src/profiles/stored-json.ts) instead of
 * `JSON.stringify`. Both give the same text; this one does not parse the values first.
 *
 * Set in `onResultProcess`, after execution: compiled execution (graphql-jit) sets its own
 * `stringify` on the results it makes. A result serialised elsewhere (graphql-ws messages, the
 * events of a subscription) gets the parsed values, which serialise to the same text.
 */
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { stringifyKeepingStoredJson } from '../../profiles/stored-json.js';

type Serialisable = ExecutionResult & { stringify?: (result: ExecutionResult) => string };

function keepStoredJson(result: Serialisable): void {
  result.stringify = stringifyKeepingStoredJson;
}

export function storedJsonAnswersPlugin(): Plugin {
  return {
    onResultProcess({ result }) {
      if (Array.isArray(result)) for (const each of result) keepStoredJson(each);
      else if (!(Symbol.asyncIterator in result)) keepStoredJson(result);
    },
  };
}
