/**
 * Client mistakes are answered as the client's: a 400 (or 405, 413) with a message that says
 * what to fix, logged below error, and a connection that is not left hanging.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/database.js';
import { MAX_REQUEST_BODY_BYTES } from '../src/graphql/transport/request-body-limit.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import type { GraphQLBody } from './support/graphql-client.js';
import { insertGraphQLFixtures } from './support/graphql-fixtures.js';
import { captureLog } from './support/log-capture.js';

const ERROR_LEVEL = 50;

/** Writes `head` (and `body`) on a raw socket; resolves with what came back once the server closes. */
function rawExchange(url: string, head: string, body = ''): Promise<{ text: string; closedAfterMs: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(Number(port), hostname, () => socket.write(head + body));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, closedAfterMs: Date.now() - started }));
    socket.setTimeout(8000, () => socket.destroy(new Error(`the server kept the connection open: ${text}`)));
  });
}

describe('client mistakes', () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;
  const log = captureLog('info');

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    handle = await testDb.open();
    await insertGraphQLFixtures(handle.db);
    // A request timeout far longer than the waits below: a socket left open would show.
    server = await startTestServer(handle, { REQUEST_TIMEOUT_MS: '60000', HEADERS_TIMEOUT_MS: '60000' }, log.logger);
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  async function expectBadRequest(response: Response, message: string): Promise<void> {
    expect(response.status).toBe(400);
    const body = (await response.json()) as GraphQLBody;
    expect(body.errors?.map((error) => [error.message, error.extensions?.code])).toEqual([[message, 'BAD_REQUEST']]);
  }

  it.each([
    ['variables={', 'The variables parameter is not valid JSON'],
    ['variables=%7B%22a%22%3A', 'The variables parameter is not valid JSON'],
    ['extensions=[', 'The extensions parameter is not valid JSON'],
    [
      'extensions=%7B%22persistedQuery%22%3A1%7D',
      'Invalid persistedQuery extension: expected {"version":1,"sha256Hash":"<SHA-256 of the document, hex>"}',
    ],
    [
      'extensions=%7B%22persistedQuery%22%3A%7B%22version%22%3A2%2C%22sha256Hash%22%3A%22x%22%7D%7D',
      'Invalid persistedQuery extension: expected {"version":1,"sha256Hash":"<SHA-256 of the document, hex>"}',
    ],
  ])('GET /graphql?query={__typename}&%s: 400 for every Accept, logged below error', async (parameter, message) => {
    log.lines.length = 0;
    for (const accept of ['application/json', 'application/graphql-response+json', '*/*']) {
      await expectBadRequest(
        await fetch(`${server.url}/graphql?query={__typename}&${parameter}`, { headers: { accept } }),
        message,
      );
    }
    expect(log.lines.filter((line) => line.level >= ERROR_LEVEL)).toEqual([]);
  });

  it.each([
    [5, 'number'],
    [true, 'boolean'],
    [['a'], 'array'],
    [{ toString: false }, 'object'],
    [{ toString: 1, valueOf: 2 }, 'object'],
  ])('answers a JSON body whose operationName is %j with 400, logged below error', async (operationName, type) => {
    log.lines.length = 0;
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const response = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: '{ profile(name: "demo@me") { name } }', operationName }),
      });
      await expectBadRequest(response, `Expected "operationName" param to be a string, but given ${type}.`);
    }
    expect(log.lines.filter((line) => line.level >= ERROR_LEVEL)).toEqual([]);
  });

  it('answers a form body with broken variables as a 400 too', async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: 'query=%7B__typename%7D&variables=%7B',
    });
    await expectBadRequest(response, 'The variables parameter is not valid JSON');
  });

  it.each(['Application/JSON', 'APPLICATION/JSON; charset=UTF-8', 'application/Json'])(
    'reads a %s body (media types are case-insensitive)',
    async (contentType) => {
      const response = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: { profile: { name: 'demo@me' } } });
    },
  );

  it('reads an upper-case form body', async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'Application/X-WWW-Form-URLEncoded' },
      body: 'query=%7B__typename%7D',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('answers CONNECT with 405 and closes', async () => {
    const { text } = await rawExchange(server.url, 'CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expect(text).toContain('Connection: close');
    expect(text.endsWith('{"error":"Method not allowed"}')).toBe(true);
  });

  it.each(['/graphql', '/api/profiles'])(
    'answers a body over the limit on %s with 413 and closes the connection at once',
    async (path) => {
      const declared = MAX_REQUEST_BODY_BYTES + 1;
      const head =
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${declared}\r\n\r\n`;
      // Only the start of the body: the server must not wait for the rest.
      const { text, closedAfterMs } = await rawExchange(server.url, head, '{"query":"');
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      expect(text.toLowerCase()).toContain('connection: close');
      expect(closedAfterMs).toBeLessThan(5000);
    },
  );
});
