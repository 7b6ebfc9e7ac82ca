/**
 * The HTTP server around an App: listens, and closes in order (stop accepting, let in-flight
 * requests finish within a bound, then release the App's resources).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { App } from '../app.js';

export interface RunningServer {
  server: Server;
  /** Base URL, e.g. http://127.0.0.1:4000 */
  url: string;
  close(): Promise<void>;
}

export async function listen(app: App, port: number, host: string): Promise<RunningServer> {
  const server = createServer((req, res) => app.handle(req, res));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    async close() {
      await closeServer(server, app.config.shutdownTimeoutMs);
      await app.close();
    },
  };
}

/** Stops accepting connections and waits for in-flight requests, at most `timeoutMs`. */
async function closeServer(server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  await closed;
  clearTimeout(timer);
}
