/**
 * A fake PostgreSQL server for fault tests: a TCP server that a client connects to instead of the
 * real one, and that behaves as a test tells it to. Healthy, it forwards every connection to a
 * real PostgreSQL (so queries really run); otherwise it makes new connections meet one of the
 * ways a server refuses sessions:
 *
 * - `error`: reads the startup message and answers with a FATAL ErrorResponse carrying a given
 *   SQLSTATE, then closes (a server starting up or shutting down, out of connection slots, ...);
 * - `silent`: accepts and reads, and never answers (a hung server);
 * - `hang-up`: reads the startup message and closes without a word (a crashing backend, a
 *   pooler dropping sessions);
 * - `refuse`: stops listening, so connecting is refused (nothing runs on the port).
 *
 * The real server is never touched. With `resetOpen` a switch also resets every connection open
 * through the fake, as a restart would, so a client's next query needs a new session.
 */
import net from 'node:net';
import { resetOrClose } from './socket-reset.js';
import { listenOn, urlThrough } from './tcp-proxy.js';

export type FakeBehaviour =
  | { kind: 'forward' }
  | { kind: 'error'; code: string; message: string }
  | { kind: 'silent' }
  | { kind: 'hang-up' }
  | { kind: 'refuse' };

/** FATAL errors of a real server at connection start, with its own wording. */
export const STARTUP_ERRORS = {
  startingUp: { kind: 'error', code: '57P03', message: 'the database system is starting up' },
  shuttingDown: { kind: 'error', code: '57P03', message: 'the database system is shutting down' },
  adminShutdown: { kind: 'error', code: '57P01', message: 'terminating connection due to administrator command' },
  crashShutdown: {
    kind: 'error',
    code: '57P02',
    message: 'terminating connection because of crash of another server process',
  },
  tooManyClients: { kind: 'error', code: '53300', message: 'sorry, too many clients already' },
  notAcceptingConnections: {
    kind: 'error',
    code: '55000',
    message: 'database "nps" is not currently accepting connections',
  },
} as const satisfies Record<string, FakeBehaviour>;

export interface FakePostgresTarget {
  host: string;
  port: number;
}

export interface FakePostgres {
  readonly host: string;
  readonly port: number;
  /** Connections accepted since the start. */
  readonly acceptedConnections: number;
  /** Client connections open now. */
  readonly openConnections: number;
  /** The client connections open now, each the same object for as long as it is open. */
  openNow(): ReadonlySet<object>;
  /** What happened on a connection of openNow(), for a test's failure message. */
  describe(connection: object): string;
  /** Resets connections of openNow() (the client sees ECONNRESET). */
  reset(connections: readonly object[]): void;
  readonly behaviour: FakeBehaviour;
  /** `url` with its host and port replaced by the fake's. */
  urlThrough(url: string): string;
  /** What new connections meet from now on; `resetOpen` first resets every open connection. */
  behave(behaviour: FakeBehaviour, options?: { resetOpen?: boolean }): Promise<void>;
  close(): Promise<void>;
}

// Codes of the first message a client sends (PostgreSQL protocol, "Message Formats").
const SSL_REQUEST = 80_877_103;
const GSSENC_REQUEST = 80_877_104;
const CANCEL_REQUEST = 80_877_102;

/** A FATAL ErrorResponse: severity (localised and not), SQLSTATE and message. */
function fatalErrorResponse(code: string, message: string): Buffer {
  const fields = [`SFATAL`, `VFATAL`, `C${code}`, `M${message}`].map((field) => Buffer.from(`${field}\0`));
  const body = Buffer.concat([...fields, Buffer.from([0])]);
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/**
 * Calls `onStartup` once the client's startup message has arrived; answers SSL and GSSAPI
 * encryption requests with "N" (not supported), as a server without TLS does.
 */
function awaitStartup(socket: net.Socket, onStartup: () => void): void {
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 8) {
      const length = buffered.readInt32BE(0);
      if (buffered.length < length) return;
      const code = buffered.readInt32BE(4);
      buffered = buffered.subarray(length);
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
        socket.write('N');
      } else if (code === CANCEL_REQUEST) {
        socket.destroy();
        return;
      } else {
        socket.removeAllListeners('data');
        // Keep reading (and dropping) whatever comes next, so the client's writes never block.
        socket.on('data', () => {});
        onStartup();
        return;
      }
    }
  });
}

export async function startFakePostgres(target: FakePostgresTarget, host = '127.0.0.1'): Promise<FakePostgres> {
  let behaviour: FakeBehaviour = { kind: 'forward' };
  let accepted = 0;
  const open = new Set<net.Socket>();
  /** Per connection: when it was accepted and what happened on it since (see describe()). */
  const histories = new WeakMap<net.Socket, { acceptedAt: number; events: string[] }>();
  const note = (client: net.Socket, event: string) => {
    const history = histories.get(client);
    history?.events.push(`${event} +${Date.now() - history.acceptedAt} ms`);
  };

  const forward = (client: net.Socket) => {
    const upstream = net.connect(target.port, target.host);
    let fromClient = 0;
    let toClient = 0;
    client.on('data', (chunk: Buffer) => {
      fromClient += chunk.length;
    });
    upstream.on('data', (chunk: Buffer) => {
      toClient += chunk.length;
    });
    upstream.on('end', () => note(client, `upstream ended (${fromClient} B sent, ${toClient} B received)`));
    client.on('end', () => note(client, `client ended (${fromClient} B sent, ${toClient} B received)`));
    upstream.on('close', (hadError) => note(client, `upstream closed${hadError ? ' with an error' : ''}`));
    // A reset upstream (or a refused connect) reaches the client as a reset (as a close when the
    // upstream's end reached it first: resetOrClose); a close travels
    // through the pipe as a close after the last bytes (a FATAL error is read, not lost).
    upstream.on('error', () => resetOrClose(client));
    // The pipe lets go of the client when the upstream closes; keep reading, so the client's own
    // close arrives and this side closes too.
    upstream.on('close', () => client.resume());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server = net.createServer((client) => {
    accepted += 1;
    open.add(client);
    histories.set(client, { acceptedAt: Date.now(), events: [`accepted as #${accepted} (${behaviour.kind})`] });
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    const current = behaviour;
    switch (current.kind) {
      case 'forward':
        forward(client);
        break;
      case 'error':
        awaitStartup(client, () => client.end(fatalErrorResponse(current.code, current.message)));
        break;
      case 'hang-up':
        awaitStartup(client, () => client.end());
        break;
      case 'silent':
        client.on('data', () => {});
        break;
      case 'refuse':
        // Accepted in the instant before the listener closed.
        client.resetAndDestroy();
        break;
    }
  });

  const port = await listenOn(server, 0, host);
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));

  return {
    host,
    port,
    get acceptedConnections() {
      return accepted;
    },
    get openConnections() {
      return open.size;
    },
    openNow: () => new Set(open),
    reset(connections) {
      for (const connection of connections) {
        const socket = connection as net.Socket;
        if (open.has(socket)) {
          note(socket, socket.writableEnded ? 'closed by the test (its end was sent)' : 'reset by the test');
          resetOrClose(socket);
        }
      }
    },
    describe(connection) {
      const history = histories.get(connection as net.Socket);
      if (history === undefined) return 'not a connection of this fake';
      return `${history.events.join(', ')}; now +${Date.now() - history.acceptedAt} ms`;
    },
    get behaviour() {
      return behaviour;
    },
    urlThrough: (url) => urlThrough(url, host, port),
    async behave(next, { resetOpen = false } = {}) {
      const wasListening = server.listening;
      behaviour = next;
      if (resetOpen) for (const socket of [...open]) resetOrClose(socket);
      // server.close() waits for open connections; they are the client's to end (or reset above).
      if (next.kind === 'refuse' && wasListening) void stopListening();
      if (next.kind !== 'refuse' && !wasListening) await listenOn(server, port, host);
    },
    async close() {
      for (const socket of [...open]) socket.destroy();
      if (server.listening) await stopListening();
    },
  };
}
