/**
 * Bounds on every wait for PostgreSQL, beyond what postgres.js does by itself.
 *
 * `connect_timeout` bounds the start of a connection and `statement_timeout` bounds the work on
 * the server, but neither helps when the server (or the network in between) stops answering on
 * a connection that is already open (a "black hole"): postgres.js then waits as long as TCP
 * keeps the connection. Queries queued behind connections that are still connecting wait one
 * connect timeout per round, and a query handed to a connection in the instant between its
 * error and its close is never settled. The reconnect backoff also grows to 20 s during a long
 * outage, which delays both the failure answers and the recovery. So:
 *
 * - every query Drizzle sends gets a deadline (longest reconnect delay + connect timeout +
 *   statement timeout); past it the caller gets a DatabaseTimeoutError (code ETIMEDOUT, which
 *   `isDatabaseUnavailable` knows);
 * - those queries pass an OutageGate, which refuses them at once while the database is known to
 *   be down instead of letting them pile up in the driver's queue;
 * - every connection gets a watchdog that destroys it when PostgreSQL sent nothing back for
 *   longer than the statement timeout allows after a request, so the pool heals by itself;
 * - reconnect attempts back off quickly but never wait longer than MAX_RECONNECT_DELAY_SECONDS.
 */
import net from 'node:net';
import type postgres from 'postgres';
import type { OutageGate } from './outage-gate.js';

export const MAX_RECONNECT_DELAY_SECONDS = 1;

export class DatabaseTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';

  constructor(readonly waitedMs: number) {
    super(`PostgreSQL did not answer within ${waitedMs} ms`);
    this.name = 'DatabaseTimeoutError';
  }
}

/** postgres.js `backoff`: seconds before reconnect attempt `retries`, with jitter, capped. */
export function reconnectDelaySeconds(retries: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, MAX_RECONNECT_DELAY_SECONDS);
}

/** How long one query may take in all: a reconnect delay, a connect, and the statement. */
export function queryDeadlineMs(connectTimeoutSeconds: number, statementTimeoutMs: number): number {
  return MAX_RECONNECT_DELAY_SECONDS * 1000 + connectTimeoutSeconds * 1000 + statementTimeoutMs;
}

/** What the deadline needs of a postgres.js query: it is a lazy promise. */
type LazyQuery = Promise<unknown>;

/**
 * Makes `query` reject with a DatabaseTimeoutError when it has not settled `deadlineMs` after it
 * was started (awaited), and, with a gate, refuses it while the database is down. The query is
 * not cancelled: postgres.js turns a failed cancel into an unhandled rejection, and can strand a
 * connection when the first query of a new connection is cancelled; statement_timeout ends the
 * server's work in any case.
 */
export function withDeadline<Q extends LazyQuery>(query: Q, deadlineMs: number, gate?: OutageGate): Q {
  const run = query.then.bind(query);
  const attempt = (): Promise<Awaited<Q>> =>
    new Promise<Awaited<Q>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new DatabaseTimeoutError(deadlineMs)), deadlineMs);
      run(
        (value) => {
          clearTimeout(timer);
          resolve(value as Awaited<Q>);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  let settled: Promise<Awaited<Q>> | undefined;
  // An own `then` shadows the query's; `catch`, `finally` and `await` all go through it. The
  // query stays lazy until the first of them, as postgres.js intends, and a refused one never
  // reaches the driver.
  query.then = ((onFulfilled, onRejected) => {
    settled ??= gate === undefined ? attempt() : gate.run(attempt);
    return settled.then(onFulfilled, onRejected);
  }) as Q['then'];
  return query;
}

/**
 * Bounds every query made through `client.unsafe`, which is every query Drizzle sends outside a
 * transaction. The `begin` of a transaction (postgres.js sends it through `unsafe` with an
 * `onexecute` hook) is left alone: postgres.js reserves a connection when it runs, and a
 * transaction abandoned half-way would keep that connection reserved.
 */
export function boundUnsafeQueries(client: postgres.Sql, deadlineMs: number, gate: OutageGate): void {
  const unsafe = client.unsafe.bind(client);
  client.unsafe = ((query: string, parameters?: postgres.ParameterOrJSON<never>[], options?: UnsafeOptions) => {
    const pending = unsafe(query, parameters, options);
    return options?.onexecute === undefined ? withDeadline(pending, deadlineMs, gate) : pending;
  }) as postgres.Sql['unsafe'];
}

type UnsafeOptions = postgres.UnsafeQueryOptions & { onexecute?: unknown };

/** What postgres.js hands to a `socket` factory (its parsed connection options). */
interface SocketTarget {
  host: string[];
  port: number[];
  path?: string;
}

export interface WatchdogSockets {
  /** Connections to PostgreSQL open right now. */
  readonly open: number;
  /** The postgres.js `socket` option. */
  socket(target: SocketTarget): net.Socket;
}

/**
 * Sockets for postgres.js that are destroyed when a request was written and nothing at all came
 * back for `silenceMs`. Idle connections, and open transactions that are not waiting for the
 * server, are left alone. Under TLS the wrapped socket no longer sees the traffic, so the
 * watchdog stays quiet there and only the query deadline applies.
 */
export function watchdogSockets(silenceMs: number): WatchdogSockets {
  // A set rather than a counter: postgres.js removes every listener of a socket it upgrades to
  // TLS, so a 'close' listener cannot be relied on, but `destroyed` can.
  const live = new Set<net.Socket>();
  let nextHost = 0;
  return {
    get open() {
      for (const socket of live) if (socket.destroyed) live.delete(socket);
      return live.size;
    },
    socket(target) {
      const index = nextHost++ % Math.max(target.host.length, 1);
      const host = target.host[index] ?? 'localhost';
      const port = target.port[index] ?? target.port[0] ?? 5432;
      const socket = target.path ? net.connect(target.path) : net.connect(port, host);
      // postgres.js names the socket's host and port in its connection errors.
      Object.assign(socket, { host, port });
      live.add(socket);
      let timer: NodeJS.Timeout | undefined;
      const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
      socket.write = ((...args: unknown[]) => {
        timer ??= setTimeout(() => socket.destroy(new DatabaseTimeoutError(silenceMs)), silenceMs).unref();
        return write(...args);
      }) as net.Socket['write'];
      socket.on('data', () => {
        clearTimeout(timer);
        timer = undefined;
      });
      return socket;
    },
  };
}
