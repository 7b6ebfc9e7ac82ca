/**
 * A Yoga plugin that measures every executed GraphQL operation by name, type and outcome, and
 * notes the operation names for the request's log line. Clients choose operation names, so the
 * metric keeps at most MAX_OPERATION_NAMES of them and counts the rest as "other".
 */
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { type DocumentNode, getOperationAST } from 'graphql';
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

/** What the metric and the log line say of one operation of a document. */
interface OperationLabels {
  /** The operation's name as the log line shows it. */
  logged: string;
  label: string;
  type: string;
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

  // Found once per document and operation name: the same documents execute over and over.
  const labelsByDocument = new WeakMap<DocumentNode, Map<string | null | undefined, OperationLabels>>();
  const labelsOf = (document: DocumentNode, operationName: string | null | undefined): OperationLabels => {
    let byName = labelsByDocument.get(document);
    if (byName === undefined) {
      byName = new Map();
      labelsByDocument.set(document, byName);
    }
    let labels = byName.get(operationName);
    if (labels === undefined) {
      const operation = getOperationAST(document, operationName ?? undefined);
      const name = operation?.name?.value;
      labels = { logged: name ?? ANONYMOUS_OPERATION, label: labelFor(name), type: operation?.operation ?? 'unknown' };
      byName.set(operationName, labels);
    }
    return labels;
  };

  return {
    onExecute({ args }) {
      const started = performance.now();
      const { logged, label, type } = labelsOf(args.document, args.operationName);
      const req = nodeRequestOf(args.contextValue);
      if (req !== undefined) {
        const note = notes.of(req);
        note.graphqlOperations ??= [];
        note.graphqlOperations.push(logged);
      }
      return {
        onExecuteDone({ result }) {
          const failed = 'errors' in result && result.errors !== undefined && result.errors.length > 0;
          const seconds = (performance.now() - started) / 1e3;
          metrics.graphqlOperationDuration.series(label, type, failed ? 'error' : 'ok').observe(seconds);
        },
      };
    },
  };
}
