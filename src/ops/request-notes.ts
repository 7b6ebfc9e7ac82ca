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
  const notes = new WeakMap<IncomingMessage, RequestNote>();
  return {
    get: (req) => notes.get(req),
    of(req) {
      let note = notes.get(req);
      if (note === undefined) {
        note = {};
        notes.set(req, note);
      }
      return note;
    },
  };
}
