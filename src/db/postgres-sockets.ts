/**
 * The sockets postgres.js connects through, made by us with its documented `socket` option (a
 * function, optionally async, returning a socket) and Node's documented socket API. They add two
 * things the driver lacks:
 *
 * - a silence watchdog: a socket destroys itself when a request was written and nothing at all
 *   came back for `silenceMs` (Node's idle timeout: no byte either way). Idle connections, and
 *   open transactions that are not waiting for the server, are left alone: the idle timeout fires
 *   for them too, but nothing was written since the last answer.
 * - a brake on failing connection starts. When a server closes a session during its start
 *   without a word (a pooler dropping sessions), postgres.js 3.4 starts the connection again at
 *   once, in a loop, for as long as that lasts (porsager/postgres#1193). So once `maxStarts`
 *   connections have died young within a second, the next one waits until that second is over:
 *   no more than `maxStarts` starts a second while starts keep failing, and no wait otherwise.
 *
 * postgres.js drops every listener of a socket it upgrades to TLS, so under TLS both stay quiet
 * and only the query deadline applies.
 */
import net from 'node:net';

/** A connection was destroyed because PostgreSQL sent nothing back after a request. */
class ConnectionSilentError extends Error {
  readonly code = 'ETIMEDOUT';

  constructor(readonly silentMs: number) {
    super(`PostgreSQL sent nothing for ${silentMs} ms after a request; connection closed`);
    this.name = 'ConnectionSilentError';
  }
}

/** The pool is closing: a connection start that was held back is not made any more. */
class PoolClosedError extends Error {
  readonly code = 'CONNECTION_ENDED';

  constructor() {
    super('the connection pool is closed');
    this.name = 'PoolClosedError';
  }
}

/** What postgres.js hands to a `socket` factory (its parsed connection options). */
interface SocketTarget {
  host: string[];
  port: number[];
  path?: string;
}

export interface PostgresSocketOptions {
  /** Silence after a request that gives a connection up. */
  silenceMs: number;
  /** A connection closed sooner than this after its start died young (its start failed). */
  youngMs: number;
  /** Connection starts a second while they keep failing. */
  maxStarts: number;
  /** True once the pool is closing. */
  closing(): boolean;
}

export interface PostgresSockets {
  /** Connections to PostgreSQL open right now. */
  readonly open: number;
  /** The postgres.js `socket` option. */
  socket(target: SocketTarget): Promise<net.Socket>;
}

const BRAKE_WINDOW_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function postgresSockets(options: PostgresSocketOptions): PostgresSockets {
  // A set rather than a counter: postgres.js removes every listener of a socket it upgrades to
  // TLS, so a 'close' listener cannot be relied on, but `destroyed` can.
  const live = new Set<net.Socket>();
  /** When connections that died young closed, oldest first, within the last window. */
  const youngDeaths: number[] = [];
  let nextHost = 0;

  const brakeMs = (): number => {
    const now = performance.now();
    const recent = youngDeaths.findIndex((closedAt) => closedAt > now - BRAKE_WINDOW_MS);
    youngDeaths.splice(0, recent === -1 ? youngDeaths.length : recent);
    // The maxStarts-th most recent death: starting again before a window after it would make
    // more than maxStarts failing starts a window.
    const limiting = youngDeaths.at(-options.maxStarts);
    return youngDeaths.length < options.maxStarts || limiting === undefined ? 0 : limiting + BRAKE_WINDOW_MS - now;
  };

  const watchSilence = (socket: net.Socket) => {
    let writtenWhenLastHeard = 0;
    socket.on('data', () => {
      writtenWhenLastHeard = socket.bytesWritten;
    });
    // Not setTimeout's callback: that listens once, and an idle connection times out too.
    socket.setTimeout(options.silenceMs);
    socket.on('timeout', () => {
      if (socket.bytesWritten > writtenWhenLastHeard) socket.destroy(new ConnectionSilentError(options.silenceMs));
    });
  };

  return {
    get open() {
      for (const socket of live) if (socket.destroyed) live.delete(socket);
      return live.size;
    },
    async socket(target) {
      for (let wait = brakeMs(); wait > 0; wait = brakeMs()) await sleep(wait);
      if (options.closing()) throw new PoolClosedError();
      const index = nextHost++ % Math.max(target.host.length, 1);
      const host = target.host[index] ?? 'localhost';
      const port = target.port[index] ?? target.port[0] ?? 5432;
      const socket = target.path ? net.connect(target.path) : net.connect(port, host);
      // postgres.js names the socket's host and port in its connection errors.
      Object.assign(socket, { host, port });
      live.add(socket);
      const startedAt = performance.now();
      // Registered before postgres.js's own listeners, which it removes when the socket closes.
      socket.on('close', () => {
        const closedAt = performance.now();
        if (closedAt - startedAt < options.youngMs) youngDeaths.push(closedAt);
      });
      watchSilence(socket);
      return socket;
    },
  };
}
