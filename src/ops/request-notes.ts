/**
 * What parts of the service learn about a request while handling it and the request log line
 * wants to show (the GraphQL operations it ran), kept beside the request without touching it.
 */
import type { IncomingMessage } from 'node:http';

interface RequestNote {
  graphqlOperations?: string[];
  /** The id of the request's valid API key (never the key). */
  apiKeyId?: string;
}

export interface RequestNotes {
  get(req: IncomingMessage): RequestNote | undefined;
  /** The note of `req`, created on first use. */
  of(req: IncomingMessage): RequestNote;
}

export function createRequestNotes(): RequestNotes {
  // On the request under a symbol of this instance, not in a WeakMap: see docs/decisions.md,
  // "Request notes on the request".
  const NOTE = Symbol('request note');
  type NotedRequest = IncomingMessage & { [NOTE]?: RequestNote };
  return {
    get: (req) => (req as NotedRequest)[NOTE],
    of(req) {
      const noted = req as NotedRequest;
      let note = noted[NOTE];
      if (note === undefined) {
        note = {};
        noted[NOTE] = note;
      }
      return note;
    },
  };
}
