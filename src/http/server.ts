/**
 * The HTTP server around an App: listens, and closes in order (stop accepting, let in-flight
 * requests finish within a bound, then release the App's resources).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { ServiceResponse } from './service-response.js';

export interface RunningServer {
  server: Server;
  /** Base URL, e.g. http://127.0.0.1:4000 */
  url: string;
  close(): Promise<void>;
}

const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * What the server needs of the App it runs (src/app.ts's App is one): declared here so that the
 * HTTP layer does not import the composition root that imports it.
 */
export interface ServedApp {
  config: Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'maxConnections' | 'shutdownTimeoutMs'>;
  logger: Logger;
  operations: { beginShutdown(): void };
  handle(req: IncomingMessage, res: ServerResponse): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends long-lived streams (server-sent events, WebSockets) cleanly before the drain. */
  endStreams(): Promise<void>;
  close(): Promise<void>;
}

export async function listen(app: ServedApp, port: number, host: string): Promise<RunningServer> {
  const { headersTimeoutMs, requestTimeoutMs, maxConnections } = app.config;
  const server = createServer(
    {
      // Answers write the headers known early with their own (./service-response.ts).
      ServerResponse: ServiceResponse,
      // Slow clients (slowloris) hold a socket at most this long before their request is complete.
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // How often Node looks for connections past those timeouts (its default is every 30 s).
      connectionsCheckingInterval: Math.min(1000, headersTimeoutMs),
      // Longer than the idle timeout of common load balancers (60 s), so they close first.
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    },
    (req, res) => app.handle(req, res),
  );
  server.maxConnections = maxConnections;
  const connections = trackConnections(server);
  server.on('clientError', answerClientError);
  server.on('connect', answerConnect);
  server.on('upgrade', (req, socket, head) => app.upgrade(req, socket, head));
  await new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => reject(explainListenFailure(error, port, host));
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    async close() {
      // Readiness answers 503 from here on, so a load balancer stops sending traffic.
      app.operations.beginShutdown();
      // Live-update streams never finish by themselves: they end now, cleanly, and their
      // connections then drain like any other.
      await app.endStreams();
      const drained = await closeServer(server, connections, app.config.shutdownTimeoutMs);
      if (!drained) {
        app.logger.warn(
          { timeoutMs: app.config.shutdownTimeoutMs },
          'shutdown timeout: unfinished requests were cut off',
        );
      }
      await app.close();
    },
  };
}

/** The server's open connections, each removed when it closes. */
function trackConnections(server: Server): Set<Socket> {
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  return connections;
}

/** Why the server cannot listen, in terms of the setting to change (PORT or HOST). */
function explainListenFailure(error: Error & { code?: string }, port: number, host: string): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new Error(`PORT ${port} on ${host} is in use by another process; stop it or set PORT to a free port`);
    case 'EACCES':
      return new Error(`PORT ${port} needs privileges this process does not have; set PORT to 1024 or above`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new Error(`HOST ${host} is not an address of this machine; set HOST (e.g. 127.0.0.1 or 0.0.0.0)`);
    default:
      return error;
  }
}

/**
 * Stops accepting connections and waits for in-flight requests, at most `timeoutMs`; false when
 * the wait ran out and the remaining connections were cut.
 */
async function closeServer(server: Server, connections: Set<Socket>, timeoutMs: number): Promise<boolean> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // Node counts a connection that has sent nothing yet (a browser's preconnect, a client that
  // opened one ahead) as busy, and stops its header timeout on close: without this, one such
  // connection would hold every shutdown for the whole SHUTDOWN_TIMEOUT_MS. It has no request
  // to finish.
  for (const socket of connections) if (socket.bytesRead === 0) socket.destroy();
  let drained = true;
  const timer = setTimeout(() => {
    drained = false;
    server.closeAllConnections();
  }, timeoutMs);
  await closed;
  clearTimeout(timer);
  return drained;
}

/**
 * CONNECT asks the server to be a tunnel, which it is not. Node hands such a request to a
 * `connect` listener with the raw socket, and without one it closes the socket with no answer;
 * this answers 405 with the service's JSON error body and closes.
 */
function answerConnect(_req: IncomingMessage, socket: Duplex): void {
  const body = JSON.stringify({ error: 'Method not allowed' });
  socket.end(
    'HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD, POST, OPTIONS\r\n' +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}

const CLIENT_ERROR_ANSWERS: Readonly<Record<string, readonly [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers too large'],
  // HEADERS_TIMEOUT_MS or REQUEST_TIMEOUT_MS ran out before the request was complete.
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request timeout'],
};

/**
 * A request Node's HTTP parser rejects (bytes not allowed in a request line, headers too large)
 * never reaches the router; it still gets the service's JSON error body instead of Node's bare
 * status line.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, reason, message] = CLIENT_ERROR_ANSWERS[error.code ?? ''] ?? [400, 'Bad Request', 'Bad request'];
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
