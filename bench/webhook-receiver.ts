/**
 * The receivers of bench/webhooks.ts, in a process of their own so that their work does not
 * delay the benchmark's own timing of lookups: on 127.0.0.1, a live server that verifies every
 * delivery with the `standardwebhooks` package (the secret of the request's path, as a receiver
 * does) and answers 204, and a dead one that accepts connections and never answers. Started with
 * an IPC channel (child_process.fork); it says `{ ready, live, dead }` with the two ports, then
 * answers the parent's messages:
 *
 * - `{ secrets: { [path]: secret } }`: the secrets to verify with (added to those it has);
 * - `{ count: tag }`: how many verified deliveries arrived since `{ reset: tag }`;
 * - `{ report: tag }`: those deliveries (path, name, arrival in ms since the epoch), and how many
 *   failed to verify.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedDelivery {
  path: string;
  name: string;
  /** Date.now() when the request's body had arrived. */
  at: number;
}

export type ReceiverMessage =
  | { ready: true; live: number; dead: number }
  | { counted: string; count: number }
  | { reported: string; deliveries: ReceivedDelivery[]; unverified: number };

export type ParentMessage =
  | { secrets: Record<string, string> }
  | { reset: string }
  | { count: string }
  | { report: string };

const verifiers = new Map<string, Webhook>();
let deliveries: ReceivedDelivery[] = [];
let unverified = 0;

function received(path: string, headers: http.IncomingHttpHeaders, body: string): boolean {
  const verifier = verifiers.get(path);
  if (verifier === undefined) return false;
  try {
    const event = verifier.verify(body, {
      'webhook-id': String(headers['webhook-id']),
      'webhook-timestamp': String(headers['webhook-timestamp']),
      'webhook-signature': String(headers['webhook-signature']),
    }) as { data: { name: string } };
    deliveries.push({ path, name: event.data.name, at: Date.now() });
    return true;
  } catch {
    return false;
  }
}

const live = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const ok = received(request.url ?? '', request.headers, Buffer.concat(chunks).toString('utf8'));
    if (!ok) unverified += 1;
    response.writeHead(ok ? 204 : 400).end();
  });
});

/** Never answers: its sockets stay open until the client gives up. */
const deadSockets = new Set<Socket>();
const dead = http.createServer(() => {});
dead.on('connection', (socket) => {
  deadSockets.add(socket);
  socket.on('close', () => deadSockets.delete(socket));
});

const listen = (server: http.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

const send = (message: ReceiverMessage) => process.send?.(message);

process.on('message', (message: ParentMessage) => {
  if ('secrets' in message) {
    for (const [path, secret] of Object.entries(message.secrets)) verifiers.set(path, new Webhook(secret));
  } else if ('reset' in message) {
    deliveries = [];
    unverified = 0;
  } else if ('count' in message) {
    send({ counted: message.count, count: deliveries.length });
  } else if ('report' in message) {
    send({ reported: message.report, deliveries, unverified });
  }
});
// The parent gone, so is the receiver.
process.on('disconnect', () => process.exit(0));

const [livePort, deadPort] = await Promise.all([listen(live), listen(dead)]);
send({ ready: true, live: livePort, dead: deadPort });
