/**
 * Graceful shutdown of the real process: SIGTERM (or SIGINT) stops accepting connections, lets
 * the requests in flight finish, closes the database pool and the rate-limit store, and exits 0;
 * SHUTDOWN_TIMEOUT_MS bounds the wait.
 *
 * The slow requests are real ones: profile lookups whose database sits behind a TCP proxy that
 * adds latency, as a distant or busy PostgreSQL would.
 */
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { readMetrics } from './support/metrics.js';
import { createProxiedDemoDatabase, type ProxiedDatabase } from './support/proxied-database.js';
import { statusOnNewConnection } from './support/raw-http.js';
import { startServerProcess } from './support/server-process.js';
import type { TcpProxy } from './support/tcp-proxy.js';

interface Finished {
  status: number;
  body: string;
  finishedAt: number;
}

/** A profile lookup over GraphQL on a connection of its own. */
function lookUpProfile(url: string): Promise<Finished> {
  const payload = JSON.stringify({ query: 'query Lookup { profile(name: "demo@me") { name description } }' });
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/graphql`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body, finishedAt: Date.now() }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** A connection to `url`'s server that sends nothing; `closed` settles when the server ends it. */
async function openSilentConnection(url: string): Promise<{ closed: Promise<string> }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await once(socket, 'connect');
  const closed = new Promise<string>((resolve) => {
    socket.on('error', () => {});
    socket.on('close', () => resolve('closed by the service'));
  });
  return { closed };
}

describe('shutdown of an idle service (embedded database)', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'exits 0 on %s, not held up by a connection that has sent nothing yet',
    async (signal) => {
      const database = await createTestDatabase('pglite');
      try {
        // Node counts such a connection (a browser's preconnect) as busy and stops its header
        // timeout on close: only the service's own close can end it before SHUTDOWN_TIMEOUT_MS.
        const service = await startServerProcess({
          env: { DATA_DIR: database.dataDir, SHUTDOWN_TIMEOUT_MS: '20000' },
          startTimeoutMs: 60_000,
        });
        expect(await statusOnNewConnection(`${service.url}/healthz`)).toBe(200);
        const silent = await openSilentConnection(service.url);
        service.signal(signal);
        expect(await service.exited).toEqual({ code: 0, signal: null });
        expect(await silent.closed).toBe('closed by the service');
        expect(service.logs.some((line) => line.msg === 'shutting down' && line.reason === signal)).toBe(true);
        expect(service.logs.filter((line) => line.msg.startsWith('shutdown timeout'))).toEqual([]);
      } finally {
        await database.drop();
      }
    },
    90_000,
  );
});

describe.skipIf(process.env.TEST_DATABASE_URL === undefined)('shutdown during a burst of slow requests', () => {
  let proxied: ProxiedDatabase;
  let proxy: TcpProxy;

  beforeAll(async () => {
    proxied = await createProxiedDemoDatabase();
    proxy = proxied.proxy;
  });

  afterAll(async () => {
    await proxied?.close();
  });

  it('finishes every request in flight with 200, refuses new connections, and exits 0', async () => {
    proxy.setLatency(0);
    const service = await startServerProcess({
      // A read over this slow link takes one or two round trips of 1.6 s: longer than the default
      // read deadline (2 s) allows on a busy machine, and these answers must be 200s.
      // No profile cache: the burst must wait for the slow database, not be answered from memory.
      env: {
        DATABASE_URL: proxied.url,
        SHUTDOWN_TIMEOUT_MS: '15000',
        PROFILE_LIMIT: '0',
        DB_READ_TIMEOUT_MS: '11000',
        PROFILE_CACHE_SIZE: '0',
      },
      startTimeoutMs: 60_000,
    });
    try {
      // Warm: the whole pool is connected before the database becomes slow (a connection's
      // start-up takes several round trips, which the added latency would push past the
      // connect timeout).
      const warm = await Promise.all(Array.from({ length: 20 }, () => lookUpProfile(service.url)));
      expect(warm.map((answer) => answer.status)).toEqual(Array(20).fill(200));
      proxy.setLatency(800);

      let answered = 0;
      const burst = Array.from({ length: 20 }, () =>
        lookUpProfile(service.url).finally(() => {
          answered += 1;
        }),
      );
      // Every request read before the signal (a connection whose request has not arrived yet
      // counts as idle and is closed at once): the gauge counts the 20 and the /metrics request.
      await eventually(
        async () => (await readMetrics(service.url)).value('http_requests_in_flight') === 21,
        'the burst in flight',
      );
      const signalledAt = Date.now();
      service.signal('SIGTERM');
      // The listener closes once the live-update streams have ended: from then on, refused.
      const refused = () =>
        statusOnNewConnection(`${service.url}/healthz`).then(
          () => false,
          (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED',
        );
      await eventually(refused, 'new connections refused');
      // Refused by the draining service, not by a process that has finished its work and gone.
      expect(answered).toBe(0);

      const answers = await Promise.all(burst);
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body), answer.body).toMatchObject({ data: { profile: { name: 'demo@me' } } });
        // Each one was still in flight when the signal came.
        expect(answer.finishedAt).toBeGreaterThan(signalledAt);
      }
      expect(await service.exited).toEqual({ code: 0, signal: null });
      const requestLines = service.logs.filter((line) => line.msg === 'request' && line.route === '/graphql');
      expect(requestLines.map((line) => line.status)).toEqual(Array(40).fill(200));
    } finally {
      await service.stop();
    }
  }, 90_000);

  it('stops waiting after SHUTDOWN_TIMEOUT_MS, and still exits 0', async () => {
    proxy.setLatency(0);
    const service = await startServerProcess({
      env: { DATABASE_URL: proxied.url, SHUTDOWN_TIMEOUT_MS: '300', PROFILE_LIMIT: '0' },
      startTimeoutMs: 60_000,
    });
    try {
      expect((await lookUpProfile(service.url)).status).toBe(200);
      proxy.setLatency(3000);
      const slow = lookUpProfile(service.url).catch((error: unknown) => error);
      // Read before the signal: the slow request and the /metrics request.
      await eventually(
        async () => (await readMetrics(service.url)).value('http_requests_in_flight') === 2,
        'the slow request in flight',
      );
      service.signal('SIGTERM');
      expect(await service.exited).toEqual({ code: 0, signal: null });
      // The request that outlived the bound was cut off, not answered.
      expect(await slow).toMatchObject({ code: 'ECONNRESET' });
      expect(service.logs.some((line) => line.msg.startsWith('shutdown timeout'))).toBe(true);
    } finally {
      proxy.setLatency(0);
      await service.stop();
    }
  }, 90_000);
});
