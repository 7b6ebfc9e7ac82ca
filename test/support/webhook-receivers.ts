/**
 * Webhook receivers for tests, on 127.0.0.1: each request is recorded (headers, body, when, and
 * whether it is still open), verified with the standardwebhooks library as receivers do, and
 * answered as the test says: a status with headers, never (held until the test releases it or
 * the client gives up), or a closed socket.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

type ReceiverAnswer =
  | { status: number; headers?: Record<string, string> }
  /** Answered only when the test calls `release`. */
  | 'hold'
  /** The socket is destroyed without an answer. */
  | 'close';

interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** The parsed body when one of the receiver's secrets verifies it; undefined otherwise. */
  verified: { type: string; timestamp: string; data: { name: string; cursor: string; profile?: unknown } } | undefined;
  /** Open until answered or closed. */
  open: boolean;
}

export interface WebhookReceiver {
  url: string;
  readonly requests: ReceivedRequest[];
  /** How the next requests are answered (the default: 204). */
  answer(next: (request: ReceivedRequest, index: number) => ReceiverAnswer): void;
  /** Secrets to verify with (`whsec_…`); a request verifies when any of them does. */
  secrets: string[];
  /** Answers every held request with `status`. */
  release(status?: number): void;
  /** The requests still open now. */
  openRequests(): ReceivedRequest[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(secrets: string[] = []): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const held: Array<{ request: ReceivedRequest; res: http.ServerResponse }> = [];
  let decide: (request: ReceivedRequest, index: number) => ReceiverAnswer = () => ({ status: 204 });
  const sockets = new Set<import('node:net').Socket>();

  const verify = (body: string, headers: http.IncomingHttpHeaders): ReceivedRequest['verified'] => {
    for (const secret of receiver.secrets) {
      try {
        return new Webhook(secret).verify(body, {
          'webhook-id': String(headers['webhook-id'] ?? ''),
          'webhook-timestamp': String(headers['webhook-timestamp'] ?? ''),
          'webhook-signature': String(headers['webhook-signature'] ?? ''),
        }) as ReceivedRequest['verified'];
      } catch {
        // the next secret
      }
    }
    return undefined;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const request: ReceivedRequest = {
        path: req.url ?? '/',
        headers: req.headers,
        body,
        at: performance.now(),
        verified: verify(body, req.headers),
        open: true,
      };
      requests.push(request);
      res.once('close', () => {
        request.open = false;
      });
      const answer = decide(request, requests.length - 1);
      if (answer === 'hold') held.push({ request, res });
      else if (answer === 'close') req.socket.destroy();
      else res.writeHead(answer.status, answer.headers).end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    secrets,
    answer(next) {
      decide = next;
    },
    release(status = 204) {
      for (const { res } of held.splice(0)) if (!res.writableEnded) res.writeHead(status).end();
    },
    openRequests: () => requests.filter((request) => request.open),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
