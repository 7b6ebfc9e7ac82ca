/** Small helpers for GraphQL tests: posting documents and reading the answers. */
import type { Logger as DrizzleLogger } from '../../src/db/drizzle.js';

interface GraphQLErrorBody {
  message: string;
  path?: Array<string | number>;
  locations?: Array<{ line: number; column: number }>;
  extensions?: Record<string, unknown>;
}

export interface GraphQLBody<T = Record<string, unknown>> {
  data?: T | null;
  errors?: GraphQLErrorBody[];
}

export interface GraphQLAnswer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  text: string;
  body: GraphQLBody<T>;
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** POSTs a document the way a GraphQL-over-HTTP client does. */
export async function postGraphQL<T = Record<string, unknown>>(
  fetchFn: FetchLike,
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  operationName?: string,
): Promise<GraphQLAnswer<T>> {
  const response = await fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query, variables, operationName }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as GraphQLBody<T> };
}

const BACKGROUND_STATEMENT =
  /\b(webhook_endpoints|webhook_events|webhook_deliveries|change_log|change_log_commits)\b|pg_(try_)?advisory/;

/** A Drizzle logger that keeps every SQL statement it sees, to count round trips. */
export class StatementLog implements DrizzleLogger {
  statements: string[] = [];

  logQuery(query: string): void {
    this.statements.push(query);
  }

  reset(): void {
    this.statements = [];
  }

  /**
   * The statements a request could have sent: without those of the service's background work
   * (the webhook dispatcher's polls, the change log's retention and statistics, leader locks),
   * which run on a timer and fall inside a test's window more often the busier the machine is.
   */
  ofRequests(): string[] {
    return this.statements.filter((statement) => !BACKGROUND_STATEMENT.test(statement));
  }

  /** Statements that read the given table (by its quoted name, as Drizzle writes it). */
  touching(table: string): string[] {
    return this.statements.filter((statement) => statement.includes(`"${table}"`));
  }
}

/** The `extensions.code` of every error, in order. */
export const errorCodes = (body: GraphQLBody<unknown>): unknown[] =>
  (body.errors ?? []).map((error) => error.extensions?.code);
