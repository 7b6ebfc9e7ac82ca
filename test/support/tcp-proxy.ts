/**
 * A TCP proxy inside the test process, in front of a real server (PostgreSQL), that a test can
 * break the way networks and databases break: cut every connection and refuse new ones (the
 * database went down), hold every connection open without answering (a "black hole": a hung
 * server or a partition), add latency (a slow database), and restore. The shared PostgreSQL
 * server itself is never touched.
 */
import net from 'node:net';
import { resetOrClose } from './socket-reset.js';

/** Starts `server` listening and resolves with its port; rejects if it cannot (the port is taken, say). */
export function listenOn(server: net.Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

/** `url` with its host and port replaced by `host` and `port`: the same server, reached through a listener in front of it. */
export function urlThrough(url: string, host: string, port: number): string {
  const rewritten = new URL(url);
  rewritten.hostname = host;
  rewritten.port = String(port);
  return rewritten.toString();
}

export type CutMode =
  /** Existing connections are reset and new ones are reset as soon as they arrive. */
  | 'refuse'
  /** Existing and new connections stay open, but nothing is forwarded until `restore()`. */
  | 'blackhole';

export interface TcpProxyTarget {
  host: string;
  port: number;
}

export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** Connections accepted since the proxy started (tests use it to see reconnects). */
  readonly acceptedConnections: number;
  /** Connections currently open through the proxy. */
  readonly openConnections: number;
  /** Numbers of the connections open now (the n-th accepted connection is number n). */
  openConnectionNumbers(): number[];
  /** `url` with its host and port replaced by the proxy's. */
  urlThrough(url: string): string;
  cut(mode?: CutMode): void;
  /**
   * Forwards new connections again. Held (black-holed) connections continue where they stopped,
   * or with `held: 'abandon'` stay silent for good, as those to a host that never comes back
   * while a new path to the database works (a fail-over).
   */
  restore(options?: { held?: 'resume' | 'abandon' }): void;
  /** Delays every chunk, in both directions, by `ms` (0 removes the delay). */
  setLatency(ms: number): void;
  close(): Promise<void>;
}

/** One client connection and its upstream twin. */
interface Pipe {
  number: number;
  client: net.Socket;
  upstream: net.Socket | null;
  destroy(): void;
  /** Starts the upstream connection and forwarding, once. */
  open(): void;
}

export async function startTcpProxy(target: TcpProxyTarget, host = '127.0.0.1'): Promise<TcpProxy> {
  const pipes = new Set<Pipe>();
  /** Held connections that will never be forwarded again. */
  const abandoned = new Set<Pipe>();
  let state: 'open' | CutMode = 'open';
  let latencyMs = 0;
  let accepted = 0;

  // Chunks of one direction go out in order even when the latency changes in between; `null`
  // is the end of the stream, which goes out after the last chunk.
  const forwarder = (to: () => net.Socket | null) => {
    let lastSendAt = 0;
    return (chunk: Buffer | null) => {
      const sendAt = Math.max(Date.now() + latencyMs, lastSendAt);
      lastSendAt = sendAt;
      const send = () => {
        const socket = to();
        if (socket === null || socket.destroyed) return;
        if (chunk === null) socket.end();
        else socket.write(chunk);
      };
      if (sendAt <= Date.now()) send();
      else setTimeout(send, sendAt - Date.now());
    };
  };

  const createPipe = (client: net.Socket, number: number): Pipe => {
    const pipe: Pipe = {
      number,
      client,
      upstream: null,
      destroy() {
        // A reset, like a database host that went away, rather than a polite close.
        if (!client.destroyed) resetOrClose(client);
        pipe.upstream?.destroy();
        pipes.delete(pipe);
        abandoned.delete(pipe);
      },
      open() {
        if (pipe.upstream !== null || client.destroyed) return;
        const upstream = net.connect(target.port, target.host);
        pipe.upstream = upstream;
        const toClient = forwarder(() => client);
        upstream.on('data', toClient);
        // PostgreSQL closing a session (a FATAL error, a terminated backend) reaches the client
        // as a close after its last message; a reset upstream as a reset.
        upstream.on('end', () => toClient(null));
        upstream.on('error', () => pipe.destroy());
        upstream.on('close', (hadError) => {
          if (hadError) pipe.destroy();
        });
        client.resume();
      },
    };
    client.pause();
    client.on(
      'data',
      forwarder(() => pipe.upstream),
    );
    client.on('error', () => pipe.destroy());
    client.on('close', () => pipe.destroy());
    return pipe;
  };

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    accepted += 1;
    if (state === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const pipe = createPipe(client, accepted);
    pipes.add(pipe);
    if (state === 'open') pipe.open();
  });

  const port = await listenOn(server, 0, host);

  return {
    host,
    port,
    get acceptedConnections() {
      return accepted;
    },
    get openConnections() {
      return pipes.size;
    },
    openConnectionNumbers() {
      return [...pipes].map((pipe) => pipe.number);
    },
    urlThrough: (url) => urlThrough(url, host, port),
    cut(mode = 'refuse') {
      state = mode;
      for (const pipe of [...pipes]) {
        if (mode === 'refuse') {
          pipe.destroy();
        } else {
          pipe.client.pause();
          pipe.upstream?.pause();
        }
      }
    },
    restore({ held = 'resume' } = {}) {
      state = 'open';
      if (held === 'abandon') {
        for (const pipe of pipes) abandoned.add(pipe);
        return;
      }
      for (const pipe of pipes) {
        if (pipe.upstream === null) {
          pipe.open();
        } else {
          pipe.client.resume();
          pipe.upstream.resume();
        }
      }
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    async close() {
      for (const pipe of [...pipes]) pipe.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
