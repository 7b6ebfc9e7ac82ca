/**
 * A shared cache's purge endpoint, faked on 127.0.0.1: records every request (method, path, xkey
 * header, time) and answers as the test sets it (a status, or never).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

interface PurgeRequest {
  method: string;
  path: string;
  xkey: string | undefined;
  tags: string[];
  at: number;
}

export interface FakePurgeEndpoint {
  url: string;
  readonly requests: readonly PurgeRequest[];
  /** The status of the next answers; 'hang' never answers; a Location makes 3xx redirects. */
  answer: number | 'hang';
  location: string | undefined;
  /** Resolves with the first request (already seen or to come) that matches. */
  waitFor(matches: (request: PurgeRequest) => boolean, timeoutMs?: number): Promise<PurgeRequest>;
  close(): Promise<void>;
}

export async function startFakePurgeEndpoint(): Promise<FakePurgeEndpoint> {
  const requests: PurgeRequest[] = [];
  const waiters = new Set<() => void>();
  const endpoint: FakePurgeEndpoint = {
    url: '',
    requests,
    answer: 200,
    location: undefined,
    waitFor(matches, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = requests.find(matches);
          if (found === undefined) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`no matching purge within ${timeoutMs} ms; got ${JSON.stringify(requests.map((r) => r.xkey))}`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const xkey = req.headers.xkey;
    const value = Array.isArray(xkey) ? xkey.join(' ') : xkey;
    requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      xkey: value,
      tags: value === undefined ? [] : value.split(' '),
      at: Date.now(),
    });
    for (const waiter of [...waiters]) waiter();
    req.resume();
    if (endpoint.answer === 'hang') return;
    res.writeHead(endpoint.answer, endpoint.location === undefined ? {} : { Location: endpoint.location });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return endpoint;
}
