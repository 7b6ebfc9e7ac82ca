/**
 * graphql-ws's protocol server (`makeServer`) on a `ws` server: what graphql-ws/use/ws does, with
 * the service's logger. use/ws writes its errors with `console.error` (a stack trace with file
 * paths, outside the JSON log), closes a connection whose message handling threw with code 4500
 * and, outside production, the error's own message as the reason, and lets `ws` throw on a close
 * reason longer than the protocol allows (`Subscriber for <a long id> already exists`). Here:
 *
 * - what a client causes (a frame `ws` refuses: too large, not UTF-8, a protocol violation) is
 *   logged at info with its message, no stack; `ws` has closed the connection with the frame's
 *   own code (1009, 1007, 1002) already;
 * - a failure of the service while it handles a message is logged at error (its description, no
 *   stack) and closes the connection with 4500 `Internal server error`, never the error's text;
 *   once the client is gone, a failed write is no error and is logged at debug;
 * - a close reason longer than 123 bytes is cut to a generic one of its code.
 *
 * graphql-ws's `makeServer` is the library's own mechanism for this ("an API which is to be used
 * with your favourite WebSocket server library"; use/ws is its adapter for `ws`, of about this
 * size): what the protocol does with messages is graphql-ws's, unchanged.
 */
import type { IncomingMessage } from 'node:http';
import { CloseCode, DEPRECATED_GRAPHQL_WS_PROTOCOL, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../../logging/logger.js';
import { describeErrorForLog } from '../execution/error-masking.js';

/** What each connection's hooks get besides the protocol's context: the socket and its upgrade request. */
export interface ConnectionExtra {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
}

/** A WebSocket close frame's reason is at most 123 bytes (RFC 6455 5.5). */
const MAX_CLOSE_REASON_BYTES = 123;
const INTERNAL_ERROR_REASON = 'Internal server error';

export interface GraphQLWsServer {
  /** Closes every connection with 1001 ("Going away") and stops the `ws` server. */
  dispose(): Promise<void>;
}

/** Serves graphql-ws on `server`'s connections; `keepAliveMs` is the ping interval (a missed pong ends the connection). */
export function serveGraphQLWs(
  options: ServerOptions<Record<string, unknown> | undefined, ConnectionExtra>,
  server: WebSocketServer,
  logger: Logger,
  keepAliveMs: number,
): GraphQLWsServer {
  const protocol = makeServer(options);
  server.options.handleProtocols = handleProtocols;
  server.on('error', (error) => logger.error({ reason: describeErrorForLog(error) }, 'WebSocket server failed'));
  server.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    socket.on('error', (error) =>
      logger.info({ reason: describeErrorForLog(error) }, 'graphql-ws connection refused a frame'),
    );
    const keepAlive = keepConnectionAlive(socket, keepAliveMs);
    const close = (code: number, reason: string) => {
      socket.close(code, Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES ? reason : closeReasonOf(code));
    };
    const failed = (error: unknown) => {
      if (socket.readyState !== socket.OPEN) {
        logger.debug({ reason: describeErrorForLog(error) }, 'graphql-ws message not answered: the client left');
        return;
      }
      logger.error({ reason: describeErrorForLog(error) }, 'graphql-ws message handling failed');
      close(CloseCode.InternalServerError, INTERNAL_ERROR_REASON);
    };
    const closed = protocol.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            socket.send(data, (error) => (error ? reject(error) : resolve()));
          }),
        close,
        onMessage: (handle) =>
          socket.on('message', (data) => {
            handle(String(data)).catch(failed);
          }),
      },
      { socket, request },
    );
    socket.once('close', (code, reason) => {
      keepAlive.stop();
      if (code === CloseCode.SubprotocolNotAcceptable && socket.protocol === DEPRECATED_GRAPHQL_WS_PROTOCOL) {
        logger.info('graphql-ws connection refused: subscriptions-transport-ws is not supported');
      }
      closed(code, String(reason)).catch((error: unknown) =>
        logger.error({ reason: describeErrorForLog(error) }, 'graphql-ws connection failed to close its operations'),
      );
    });
  });
  return {
    async dispose() {
      for (const client of server.clients) client.close(1001, 'Going away');
      server.removeAllListeners();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** A reason that fits a close frame, for a reason that did not. */
const closeReasonOf = (code: number): string =>
  code === CloseCode.InternalServerError ? INTERNAL_ERROR_REASON : 'Closed by the server';

/** Pings every `intervalMs`; a peer whose pong does not come back within the next interval is cut. */
function keepConnectionAlive(socket: WebSocket, intervalMs: number): { stop(): void } {
  if (!(intervalMs > 0 && Number.isFinite(intervalMs))) return { stop: () => {} };
  let pongWait: NodeJS.Timeout | undefined;
  const pinging = setInterval(() => {
    if (socket.readyState !== socket.OPEN) return;
    pongWait = setTimeout(() => socket.terminate(), intervalMs);
    socket.once('pong', () => {
      clearTimeout(pongWait);
      pongWait = undefined;
    });
    socket.ping();
  }, intervalMs);
  return {
    stop() {
      clearInterval(pinging);
      clearTimeout(pongWait);
    },
  };
}
