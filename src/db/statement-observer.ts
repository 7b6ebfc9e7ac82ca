/**
 * Sees every SQL statement of a client as it is issued and as it settles: tracing makes a CLIENT
 * span of each (src/ops/tracing-sdk.ts). Every statement drizzle sends passes through one method
 * of the driver — postgres.js `sql.unsafe`, PGlite `query` — so that method is wrapped, on the
 * client object itself, only while an observer is attached: with tracing off nothing is wrapped.
 *
 * `started` is called synchronously by the code that issues the statement, so the observer sees
 * that code's async context: a statement that a DataLoader batch sends for several requests
 * belongs to the request whose load opened the batch.
 */
import type { PGlite } from '@electric-sql/pglite';
import type postgres from 'postgres';
import { type StatementSummary, summarizeStatement } from './statement-summary.js';

/** The server a statement goes to (PostgreSQL only): no user, no password. */
export interface StatementServer {
  readonly address: string;
  readonly port: number;
  /** The database name. */
  readonly namespace: string;
}

export interface StatementInfo extends StatementSummary {
  readonly server: StatementServer | undefined;
}

/** Called once the statement has settled; `error` when it failed. */
type StatementDone = (error?: unknown) => void;

export interface StatementObserver {
  started(statement: StatementInfo): StatementDone;
}

/** Stops observing: the client's own method is back. */
export type Detach = () => void;

/** The server of a PostgreSQL URL, as statement spans name it. */
export function statementServer(url: string): StatementServer {
  const parsed = new URL(url);
  return {
    address: parsed.hostname,
    port: Number(parsed.port || '5432'),
    namespace: decodeURIComponent(parsed.pathname.slice(1)) || 'postgres',
  };
}

function infoOf(text: string, server: StatementServer | undefined): StatementInfo {
  return { ...summarizeStatement(text), server };
}

/**
 * Observes the statements of a postgres.js client. A postgres.js query is a lazy promise that is
 * sent when first awaited; its settling is watched with the plain Promise `then`, which does not
 * send it (postgres.js sends from its own `then`), so a query built and never awaited is left as it was.
 */
export function observePostgresStatements(
  sql: postgres.Sql,
  observer: StatementObserver,
  server: StatementServer,
): Detach {
  const unsafe = sql.unsafe;
  const observed = ((text: string, ...rest: unknown[]) => {
    const query = (unsafe as (...args: unknown[]) => postgres.PendingQuery<postgres.Row[]>)(text, ...rest);
    const done = observer.started(infoOf(text, server));
    Promise.prototype.then.call(
      query,
      () => done(),
      (error: unknown) => done(error),
    );
    return query;
  }) as typeof sql.unsafe;
  sql.unsafe = observed;
  return () => {
    if (sql.unsafe === observed) sql.unsafe = unsafe;
  };
}

/** Observes the statements of a PGlite database (drizzle sends each through `query`). */
export function observePgliteStatements(client: PGlite, observer: StatementObserver): Detach {
  const query = client.query;
  const own = Object.hasOwn(client, 'query');
  const observed = (async (text: string, ...rest: unknown[]) => {
    const done = observer.started(infoOf(text, undefined));
    try {
      const result = await (query as (...args: unknown[]) => Promise<unknown>).call(client, text, ...rest);
      done();
      return result;
    } catch (error) {
      done(error);
      throw error;
    }
  }) as typeof client.query;
  client.query = observed;
  return () => {
    if (client.query !== observed) return;
    if (own) client.query = query;
    else Reflect.deleteProperty(client, 'query');
  };
}
