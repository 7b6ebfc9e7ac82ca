/**
 * The service in a process of its own (run with `--expose-gc --import tsx`), abused round after
 * round as test/live-updates-memory.test.ts describes; after each round it collects garbage and
 * prints what is left as one JSON line: the subscription queues and HTTP responses still alive
 * (v8.queryObjects counts them), the hub's figures, and the heap and resident set.
 *
 * Arguments: the GraphQL HTTP path (`service` or `yoga`), the number of rounds, and optionally the
 * folder of its PGlite database (a copy of a template, test/support/pglite-templates.ts, which the
 * caller removes); without one it makes a new folder, which costs an initdb, and removes it.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { importLines } from '../../src/data/importer.js';
import { openDatabase } from '../../src/db/database.js';
import { EventQueue } from '../../src/graphql/schema/subscriptions/event-queue.js';
import type { GraphQLHttpPath } from '../../src/graphql/transport/over-http.js';
import { listen } from '../../src/http/server.js';
import { createLogger } from '../../src/logging/logger.js';
import { eventually } from './eventually.js';

const [pathArgument = 'service', roundsArgument = '5', folderArgument] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const REFUSED_ACCEPTS = [
  'application/xml',
  'multipart/mixed',
  'text/html',
  'application/json;q=0',
  'text/event-stream;q=0',
];
const body = (names: readonly string[]) =>
  JSON.stringify({
    query: 'subscription($names: [String!]!) { profileChanged(names: $names) { name } }',
    variables: { names },
  });

const dataDir = folderArgument ?? mkdtempSync(path.join(os.tmpdir(), 'nps-live-abuse-'));
const database = await openDatabase({ url: undefined, dataDir });
await database.migrate();
const lines = [
  { kind: 'namespace', name: 'abuse', ownerEmail: 'abuse-owner@example.com' },
  { kind: 'profile', name: 'a@abuse', creatorEmail: 'a@example.org', description: 'A', records: {} },
];
await importLines(database.db, lines.map((line) => JSON.stringify(line)).join('\n'));
const config = loadConfig({
  NODE_ENV: 'test',
  PORT: '0',
  HOST: '127.0.0.1',
  PROFILE_LIMIT: '0',
  TRUST_PROXY_HOPS: '1',
});
const app = await createApp(config, createLogger('silent', { pretty: false }), {
  database,
  graphqlHttpPath: pathArgument as GraphQLHttpPath,
});
const running = await listen(app, 0, '127.0.0.1');
const { port } = new URL(running.url);

/** A client that sends a subscription over SSE and leaves before (or as) its answer arrives. */
async function leaveEarly(address: string, waitForHead: boolean): Promise<void> {
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const text = body(['a@abuse']);
  socket.write(
    `POST /graphql HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${address}\r\nAccept: text/event-stream\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
  if (waitForHead) {
    // Leaves as its answer arrives; one that never comes does not hold the round up for long.
    await new Promise((resolve) => {
      socket.once('data', resolve);
      setTimeout(resolve, 2000).unref();
    });
  }
  socket.destroy();
}

async function round(index: number): Promise<void> {
  // 406 storms from 50 addresses each (past the per-client bound of 20 when slots leak).
  for (let request = 0; request < 250; request += 1) {
    const answer = await fetch(`${running.url}/graphql`, {
      method: 'POST',
      body: body(['a@abuse']),
      headers: {
        'content-type': 'application/json',
        accept: REFUSED_ACCEPTS[request % REFUSED_ACCEPTS.length] ?? '',
        'x-forwarded-for': `10.${index}.${request % 50}.1`,
      },
      signal: AbortSignal.timeout(5000),
    });
    await answer.body?.cancel();
  }
  // Refused streams: invalid names.
  for (let request = 0; request < 50; request += 1) {
    const answer = await fetch(`${running.url}/graphql`, {
      method: 'POST',
      body: body(['bad name']),
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      signal: AbortSignal.timeout(5000),
    });
    // A refusal is a short answer; a stream (what it must not be) is cut.
    await answer.body?.cancel();
  }
  for (let request = 0; request < 40; request += 1) await leaveEarly(`10.${index}.200.${request}`, request % 2 === 1);
  // The server notices clients going away a little later.
  await eventually(() => openCount() === 0, { what: 'every subscription closed', withinMs: 5000, everyMs: 20 });
}

function openCount(): number {
  const { open } = app.live.stats();
  return open.sse + open.websocket + open.rest;
}

/**
 * Collections with turns of the event loop between them: what one collection frees can run
 * callbacks that let go of more. No event says that nothing more will be let go; the figures
 * after it are what the test asserts, not something awaited.
 */
async function settle(): Promise<void> {
  for (let pass = 0; pass < 3; pass += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc?.();
  }
}

for (let index = 0; index < Number(roundsArgument); index += 1) {
  process.stderr.write(`round ${index + 1}\n`);
  await round(index);
  await settle();
  const memory = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({
      round: index + 1,
      queues: v8.queryObjects(EventQueue, { format: 'count' }),
      responses: v8.queryObjects(ServerResponse, { format: 'count' }),
      live: app.live.stats(),
      heapUsedMb: memory.heapUsed / 2 ** 20,
      externalMb: memory.external / 2 ** 20,
      rssMb: memory.rss / 2 ** 20,
    })}\n`,
  );
}
await running.close();
await database.close();
if (folderArgument === undefined) rmSync(dataDir, { recursive: true, force: true });
