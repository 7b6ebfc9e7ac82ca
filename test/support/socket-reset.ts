/** Resetting a test stand-in's sockets (test/support/fake-postgres.ts, test/support/tcp-proxy.ts). */
import type net from 'node:net';

/**
 * Resets `socket` (the peer sees ECONNRESET), or closes it when its end was sent already. Node
 * asks libuv for the reset, which refuses it while a shutdown is under way (EINVAL); Node then
 * emits that as 'error' and never emits 'close' (seen on Node 22 and 24). In the fake PostgreSQL,
 * a client reset in the millisecond after its upstream's end went through the pipe stayed open
 * for good, and the outage tests waited on it in vain (test/support/outage-causes.ts,
 * clientLetGo).
 */
export function resetOrClose(socket: net.Socket): void {
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}
