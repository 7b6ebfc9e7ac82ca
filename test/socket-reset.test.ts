/**
 * The test stand-ins for PostgreSQL (test/support/fake-postgres.ts, tcp-proxy.ts) reset their
 * clients' sockets to imitate a database host that went away. A socket whose end was sent just
 * before must still close (and say so), or the outage tests wait for it in vain.
 */
import { once } from 'node:events';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { resetOrClose } from './support/socket-reset.js';

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A connected pair on loopback: the server's side and the client's. */
async function connectedPair(): Promise<{ server: net.Socket; client: net.Socket }> {
  const listener = net.createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const { port } = listener.address() as net.AddressInfo;
  const accepted = once(listener, 'connection') as Promise<[net.Socket]>;
  const client = net.connect(port, '127.0.0.1');
  client.on('error', () => {});
  const [[server]] = await Promise.all([accepted, once(client, 'connect')]);
  server.on('error', () => {});
  closers.push(() => {
    server.destroy();
    client.destroy();
    listener.close();
  });
  return { server, client };
}

const closedWithin = (socket: net.Socket, ms: number) =>
  Promise.race([
    once(socket, 'close').then(() => true),
    new Promise((resolve) => setTimeout(() => resolve(false), ms)),
  ]);

describe('resetOrClose', () => {
  it('resets a socket whose end was not sent: the peer sees ECONNRESET', async () => {
    const { server, client } = await connectedPair();
    const failed = once(client, 'error') as Promise<[NodeJS.ErrnoException]>;
    const serverClosed = closedWithin(server, 2000);
    resetOrClose(server);
    expect(await serverClosed).toBe(true);
    const [error] = await failed;
    expect(error.code).toBe('ECONNRESET');
  });

  it('closes a socket whose end was sent a moment before (the shutdown under way), and says so', async () => {
    const { server, client } = await connectedPair();
    const ended = once(client, 'end');
    client.resume();
    const serverClosed = closedWithin(server, 2000);
    server.end();
    resetOrClose(server);
    expect(await serverClosed).toBe(true);
    await ended;
  });
});
