/**
 * GraphQL by persisted document: each request carries `documentId` (`sha256:<hash>`, the
 * GraphQL-over-HTTP specification's Appendix A) instead of the document's text. The service knows
 * the document from the manifest graphql-codegen wrote, and a documents-only API key may run
 * nothing else. Results and variables are typed from the document.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createClient, type RequestParams } from 'graphql-sse';
import { authorization, type Settings } from './settings.js';

/** What graphql-codegen's client preset adds to each document when it writes the manifest. */
interface PersistedDocument {
  readonly __meta__?: { readonly hash?: string };
}

interface GraphQLAnswer<Result> {
  data?: Result | null;
  errors?: ReadonlyArray<{ message: string; extensions?: { code?: string } }>;
}

export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'GraphQLRequestError';
  }
}

/** The document's id (`sha256:<hash>`), as the manifest names it. */
export function documentId(document: object): string {
  const id = (document as PersistedDocument).__meta__?.hash;
  if (id === undefined) throw new Error('the document has no id: run `npm run generate`');
  return id;
}

/** Runs a query by its id over POST and answers its typed data; a GraphQL error throws. */
export async function execute<Result, Variables>(
  settings: Settings,
  document: TypedDocumentNode<Result, Variables>,
  variables: Variables,
): Promise<Result> {
  const response = await fetch(new URL('/graphql', settings.serviceUrl), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...authorization(settings),
    },
    body: JSON.stringify({ documentId: documentId(document), variables }),
  });
  const answer = (await response.json()) as GraphQLAnswer<Result>;
  const error = answer.errors?.[0];
  if (error !== undefined) throw new GraphQLRequestError(error.message, error.extensions?.code);
  if (answer.data == null) throw new Error(`the service answered ${response.status} without data`);
  return answer.data;
}

/**
 * Runs a subscription by its id over Server-Sent Events (graphql-sse's client) and calls `next`
 * with each typed event until the returned function is called or the stream ends.
 */
export function subscribe<Result, Variables>(
  settings: Settings,
  document: TypedDocumentNode<Result, Variables>,
  variables: Variables,
  handlers: { next: (data: Result) => void; error: (error: unknown) => void; complete?: () => void },
): () => void {
  const client = createClient({
    url: new URL('/graphql', settings.serviceUrl).href,
    headers: () => authorization(settings),
    retryAttempts: 0,
  });
  // graphql-sse's request type asks for `query`; the service reads `documentId` instead
  // (Appendix A), and the client sends the payload as JSON as it is.
  const payload = { documentId: documentId(document), variables } as unknown as RequestParams;
  const unsubscribe = client.subscribe<Result>(payload, {
    next: (message) => {
      const error = message.errors?.[0];
      if (error !== undefined) handlers.error(new GraphQLRequestError(error.message, undefined));
      else if (message.data != null) handlers.next(message.data);
    },
    error: handlers.error,
    complete: () => handlers.complete?.(),
  });
  return () => {
    unsubscribe();
    client.dispose();
  };
}
