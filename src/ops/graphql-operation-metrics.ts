/**
 * A Yoga plugin that measures every executed GraphQL operation by name, type and outcome, and
 * notes the operation names for the request's log line. Clients choose operation names, so the
 * metric keeps at most MAX_OPERATION_NAMES of them and counts the rest as "other".
 */
import type { IncomingMessage } from 'node:http';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Metrics } from './metrics.js';
import type { RequestNotes } from './request-notes.js';

const MAX_OPERATION_NAMES = 50;
const ANONYMOUS_OPERATION = 'anonymous';
const OTHER_OPERATIONS = 'other';

function nodeRequestOf(context: unknown): IncomingMessage | undefined {
  const req = (context as { req?: unknown } | null)?.req;
  return typeof req === 'object' && req !== null && 'socket' in req ? (req as IncomingMessage) : undefined;
}

export function graphqlOperationMetrics(metrics: Metrics, notes: RequestNotes): Plugin {
  const knownNames = new Set<string>();
  const labelFor = (name: string | undefined): string => {
    if (name === undefined) return ANONYMOUS_OPERATION;
    if (knownNames.has(name)) return name;
    if (knownNames.size >= MAX_OPERATION_NAMES) return OTHER_OPERATIONS;
    knownNames.add(name);
    return name;
  };

  return {
    onExecute({ args }) {
      const started = process.hrtime.bigint();
      const operation = getOperationAST(args.document, args.operationName ?? undefined);
      const name = operation?.name?.value;
      const label = labelFor(name);
      const type = operation?.operation ?? 'unknown';
      const req = nodeRequestOf(args.contextValue);
      if (req !== undefined) {
        const note = notes.of(req);
        note.graphqlOperations ??= [];
        note.graphqlOperations.push(name ?? ANONYMOUS_OPERATION);
      }
      return {
        onExecuteDone({ result }) {
          const failed = 'errors' in result && result.errors !== undefined && result.errors.length > 0;
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          metrics.graphqlOperationDuration.series(label, type, failed ? 'error' : 'ok').observe(seconds);
        },
      };
    },
  };
}
