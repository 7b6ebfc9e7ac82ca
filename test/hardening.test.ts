/**
 * What a hostile client can and cannot do to a running service: documents that try to exhaust
 * memory or the stack, request bodies that would be reflected, slow or too many connections; and
 * the log levels client mistakes are reported at.
 */
import net from 'node:net';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPILE_AFTER_EXECUTIONS,
  COMPILED_BYTES_PER_DOCUMENT_CHARACTER,
  compiledQueryBytes,
  createDocumentCaches,
  parsedDocumentBytes,
} from '../src/graphql/execution/document-cache.js';
import { MAX_NESTING } from '../src/graphql/execution/nesting-limit.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { insertGraphQLFixtures } from './support/graphql-fixtures.js';
import { captureLog } from './support/log-capture.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

/** POSTs to /graphql as a GraphQL-over-HTTP client (whose errors come with their HTTP status). */
const post = (url: string, body: string) =>
  fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body,
  });

/** A document of `count` aliased `__typename` fields, made distinct by `tag`. */
const aliasFlood = (count: number, tag: number) =>
  `{ ${Array.from({ length: count }, (_, i) => `t${tag}x${i}: __typename`).join(' ')} }`;

/** The service answers an ordinary lookup and has not exited (out of memory, say). */
async function expectStillAnswering(service: ServerProcess): Promise<void> {
  const normal = await post(service.url, JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' }));
  expect(normal.status).toBe(200);
  expect(await normal.json()).toEqual({ data: { profile: { name: 'demo@me' } } });
  // The answer shows it was alive after the attack; a process dying of what it did (a heap
  // past its limit after a late collection, say) has no event before its exit: a short window.
  const exit = await Promise.race([
    service.exited,
    new Promise((resolve) => setTimeout(() => resolve('running'), 100)),
  ]);
  expect(exit).toBe('running');
}

describe('GraphQL documents that try to exhaust the server', () => {
  let testDb: TestDatabase;
  let service: ServerProcess;

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    // A heap of 256 MB: 400 such documents held as parsed documents would need about 700 MB.
    service = await startServerProcess({
      env: { ...testDb.env, NODE_ENV: 'production', PROFILE_LIMIT: '0', NODE_OPTIONS: '--max-old-space-size=256' },
      startTimeoutMs: 90_000,
    });
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await testDb?.drop();
  });

  it('keeps answering after 400 distinct documents of 1,600 aliased fields each', async () => {
    for (let tag = 0; tag < 400; tag += 4) {
      const answers = await Promise.all(
        [0, 1, 2, 3].map((offset) => post(service.url, JSON.stringify({ query: aliasFlood(1600, tag + offset) }))),
      );
      // Refused for their aliases (graphql-armor.test.ts); what matters here is what they leave behind.
      for (const answer of answers) expect(answer.status).toBe(400);
    }
    await expectStillAnswering(service);
  }, 180_000);

  it('keeps answering when 100 distinct documents of 50 aliased profile lookups each come often enough to compile', async () => {
    // Compiled, each would hold about 2.7 MB: 270 MB in all, past the heap of 256 MB.
    const selection = 'name description image level records { key type raw }';
    const heavy = (tag: number) =>
      `{ ${Array.from({ length: 50 }, (_, i) => `a${i}: profile(name: "n${tag}x${i}@me") { ${selection} }`).join(' ')} }`;
    for (let tag = 0; tag < 100; tag += 10) {
      const tags = Array.from({ length: 10 }, (_, offset) => tag + offset);
      for (let round = 0; round < COMPILE_AFTER_EXECUTIONS + 1; round += 1) {
        const answers = await Promise.all(
          tags.map((each) => post(service.url, JSON.stringify({ query: heavy(each) }))),
        );
        for (const answer of answers) expect(answer.status).toBe(200);
      }
    }
    await expectStillAnswering(service);
  }, 180_000);

  it('refuses a document nested 2,000 levels deep as a syntax error, every time, without touching the stack', async () => {
    const deep = `${'{a'.repeat(2000)}${'}'.repeat(2000)}`;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const answer = await post(service.url, JSON.stringify({ query: deep }));
      expect(answer.status).toBe(400);
      const body = (await answer.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
      expect(body.errors[0]?.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
      expect(body.errors[0]?.message).toContain(`${MAX_NESTING} levels`);
    }
    // Brackets inside strings and comments do not count.
    const quoted = JSON.stringify({ query: `{ profile(name: "${'{'.repeat(100)}") { name } } # ${'['.repeat(100)}` });
    expect((await post(service.url, quoted)).status).toBe(200);
  });
});

describe('a running service facing a hostile client', () => {
  let testDb: TestDatabase;
  let server: TestServer;
  const log = captureLog('debug');

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    const handle = await testDb.open();
    await insertGraphQLFixtures(handle.db);
    server = await startTestServer(
      handle,
      // REQUEST_TIMEOUT_MS far above HEADERS_TIMEOUT_MS: a connection closed early can only
      // have been closed by the header timeout.
      { NODE_ENV: 'production', HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '60000', MAX_CONNECTIONS: '6' },
      log.logger,
    );
  });
  afterAll(async () => {
    await server?.close();
    await server?.app.database.close();
    await testDb?.drop();
  });

  it('never reflects the request body, not even of invalid JSON', async () => {
    const secret = 'SECRET-BODY-BYTES-1234';
    const answer = await post(server.url, `{"query": "{ __typename }", ${secret} ${'x'.repeat(5000)}`);
    expect(answer.status).toBe(400);
    const text = await answer.text();
    expect(text).not.toContain(secret);
    expect(JSON.parse(text)).toEqual({
      errors: [{ message: 'POST body sent invalid JSON.', extensions: { code: 'BAD_REQUEST' } }],
    });
  });

  it('logs client mistakes at info, never at error', async () => {
    const before = log.lines.length;
    await post(server.url, JSON.stringify({ query: 'query ($n: String!) { profile(name: $n) { name } }' }));
    await post(server.url, JSON.stringify({ query: 'subscription { x }' }));
    await post(server.url, '{ not json');
    await post(server.url, JSON.stringify({ query: '{ profile(name: "not a name") { name } }' }));
    const lines = log.lines.slice(before);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines.some((line) => line.msg === 'GraphQL request failed' && line.level === 30)).toBe(true);
  });

  it('keeps a client’s Connection: close on streamed answers, and sends no made-up content coding', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const { port } = new URL(server.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      const body = JSON.stringify({ query: '{ __typename }' });
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n` +
          `Connection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
    });
    const head = answer.slice(0, answer.indexOf('\r\n\r\n')).toLowerCase();
    expect(head).toContain('content-type: text/event-stream');
    expect(head).toContain('connection: close');
    expect(head).not.toContain('content-encoding');
    expect(answer).toContain('"__typename":"Query"');
  });

  it('closes a connection whose headers do not arrive within HEADERS_TIMEOUT_MS', async () => {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const started = Date.now();
    const reply = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
      });
      socket.on('close', () => resolve(text));
    });
    // Half of REQUEST_TIMEOUT_MS: room for a loaded machine, and still only the header timeout
    // (checked every second) can have closed it.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(reply).toMatch(/^HTTP\/1.1 408/);
  }, 60_000);

  it('holds at most MAX_CONNECTIONS connections, and takes new ones when some close', async () => {
    const { port } = new URL(server.url);
    const open = async () => {
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      return socket;
    };
    const held = await Promise.all(Array.from({ length: 6 }, open));
    const extra = await open();
    const closedAt = await new Promise<number>((resolve) => extra.once('close', () => resolve(Date.now())));
    expect(closedAt).toBeGreaterThan(0);
    for (const socket of held) socket.destroy();
    // The server hears of the closes a little later; until then a new connection is refused.
    await eventually(async () => (await fetch(`${server.url}/healthz`)).status === 200, {
      what: 'a new connection taken and answered',
      withinMs: 5000,
    });
  });
});

describe('the parsed-document cache', () => {
  const parsed = (text: string) => parse(text);

  it('keeps a document from its second sighting on, and drops it when it fails validation', () => {
    const caches = createDocumentCaches(1024 * 1024);
    const { documentCache } = caches.options;
    const text = '{ profile(name: "demo@me") { name } }';
    documentCache.set(text, parsed(text));
    expect(documentCache.get(text)).toBeUndefined();
    const document = parsed(text);
    documentCache.set(text, document);
    expect(documentCache.get(text)).toBe(document);
    expect(caches.estimatedBytes()).toBe(parsedDocumentBytes(text));

    const onValidate = caches.plugin.onValidate as unknown as (payload: {
      params: { documentAST: unknown };
    }) => (result: { valid: boolean }) => void;
    onValidate({ params: { documentAST: document } })({ valid: false });
    expect(documentCache.get(text)).toBeUndefined();
  });

  it('lets a cached document run compiled, counting the compiled query, and never a large one', () => {
    const bound = 1024 * 1024;
    const caches = createDocumentCaches(bound);
    const { documentCache } = caches.options;
    const small = '{ profile(name: "demo@me") { name } }';
    const notCached = parsed(small);
    expect(caches.reserveCompiled(notCached)).toBe(false);
    documentCache.set(small, parsed(small));
    const document = parsed(small);
    documentCache.set(small, document);
    expect(caches.reserveCompiled(document)).toBe(true);
    expect(caches.estimatedBytes()).toBe(
      parsedDocumentBytes(small) + small.length * COMPILED_BYTES_PER_DOCUMENT_CHARACTER,
    );
    expect(caches.reserveCompiled(document)).toBe(true);

    // Compiled, this one would take more than a sixteenth of the cache.
    const large = `{ ${'a: __typename '.repeat(Math.ceil(bound / 16 / COMPILED_BYTES_PER_DOCUMENT_CHARACTER / 14))}}`;
    documentCache.set(large, parsed(large));
    const largeDocument = parsed(large);
    documentCache.set(large, largeDocument);
    expect(documentCache.get(large)).toBe(largeDocument);
    expect(caches.reserveCompiled(largeDocument)).toBe(false);
  });

  it('holds at most its bound in estimated bytes, however many documents come twice', () => {
    const bound = 64 * 1024;
    const caches = createDocumentCaches(bound);
    for (let i = 0; i < 500; i += 1) {
      const text = `{ a${i}: __typename }`;
      caches.options.documentCache.set(text, parsed(text));
      caches.options.documentCache.set(text, parsed(text));
    }
    expect(caches.estimatedBytes()).toBeLessThanOrEqual(bound);
    expect(caches.estimatedBytes()).toBeGreaterThan(bound / 2);
  });

  it('counts plans compiled by shape in the same bound, and hands out only documents of the text asked', () => {
    const bound = 1024 * 1024;
    const caches = createDocumentCaches<{ plan: string }>(bound);
    const shape = '{ profile(name: "#0") { name } }';
    const plan = { plan: 'compiled' };
    caches.plans.set(shape, plan, shape.length);
    expect(caches.plans.get(shape)).toBe(plan);
    expect(caches.estimatedBytes()).toBeGreaterThanOrEqual(compiledQueryBytes(shape.length));
    // Whatever a client sends as its text, the cache answers documents only.
    expect(caches.options.documentCache.get(`\u0000${shape}`)).toBeUndefined();
    // A document is kept only under its own text (not where it stood in for another text).
    const text = '{ profile(name: "alice@acme") { name } }';
    const standIn = parsed('{ profile(name: "bob@acme") { name } }');
    caches.options.documentCache.set(text, standIn);
    caches.options.documentCache.set(text, standIn);
    expect(caches.options.documentCache.get(text)).toBeUndefined();
    // A plan that would take more than a sixteenth of the cache is not kept.
    const large = 'x'.repeat(Math.ceil(bound / 16 / COMPILED_BYTES_PER_DOCUMENT_CHARACTER) + 1);
    expect(caches.plans.fits(large.length)).toBe(false);
    caches.plans.set(large, plan, large.length);
    expect(caches.plans.get(large)).toBeUndefined();
  });
});
