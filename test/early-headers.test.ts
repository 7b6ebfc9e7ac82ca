/**
 * The headers every answer carries (request id, nosniff, CORS) are given before the answer is
 * known and written with the answer's own headers (src/http/service-response.ts). What a client
 * relies on: each of them once, the answer's own value where it sets one, on every way node:http
 * lets a handler write its head. What the module is for: no header of an answer goes through
 * node's `setHeader` on the service's own paths. vitest.config.ts runs this suite on Yoga's
 * handler too, which sets its headers with `setHeaders`.
 */
import { createServer, type IncomingMessage, OutgoingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { earlyHeaderOf, ServiceResponse, setEarlyHeader } from '../src/http/service-response.js';
import { TEST_GRAPHQL_HTTP_PATH, useDemoServer } from './support/app-server.js';
import { type RawResponse, rawClient } from './support/raw-http.js';

/** The values of header `name` (any case) in the order sent, as many as were sent. */
function valuesOf(answer: RawResponse, name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < answer.rawHeaders.length; i += 2) {
    if (answer.rawHeaders[i]?.toLowerCase() === name.toLowerCase()) values.push(answer.rawHeaders[i + 1] as string);
  }
  return values;
}

describe('ServiceResponse: early headers written with the answer', () => {
  let handler: (res: ServerResponse) => void = () => {};
  const server = createServer({ ServerResponse: ServiceResponse }, (_req, res) => {
    setEarlyHeader(res, 'X-Request-Id', 'early-id');
    setEarlyHeader(res, 'X-Content-Type-Options', 'nosniff');
    handler(res);
  });
  let client: ReturnType<typeof rawClient>;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = rawClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const answerWith = async (write: (res: ServerResponse) => void) => {
    handler = write;
    return client.send('/');
  };

  it('sends the early headers first, then the answer’s, each once', async () => {
    let setHeaders: string[] = [];
    const answer = await answerWith((res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      setHeaders = res.getHeaderNames();
    });
    expect(setHeaders).toEqual([]);
    expect(answer.rawHeaders.slice(0, 6)).toEqual([
      'X-Request-Id',
      'early-id',
      'X-Content-Type-Options',
      'nosniff',
      'Content-Type',
      'text/plain',
    ]);
  });

  it('lets the answer’s header of the same name, in any case, replace the early one', async () => {
    const answer = await answerWith((res) =>
      res.writeHead(200, { 'x-REQUEST-id': 'answer-id', 'X-Content-Type-Options': 'nosniff' }).end(),
    );
    expect(valuesOf(answer, 'x-request-id')).toEqual(['answer-id']);
    expect(valuesOf(answer, 'x-content-type-options')).toEqual(['nosniff']);
  });

  it('keeps a status message given with the headers', async () => {
    const answer = await answerWith((res) => res.writeHead(299, 'Fine Indeed', { 'Content-Type': 'text/plain' }).end());
    expect(answer).toMatchObject({ status: 299, statusMessage: 'Fine Indeed' });
    expect(valuesOf(answer, 'x-request-id')).toEqual(['early-id']);
  });

  it('adds them to an answer whose head node writes by itself (end without writeHead)', async () => {
    let setHeaders: string[] = [];
    const answer = await answerWith((res) => {
      res.statusCode = 404;
      res.end();
      setHeaders = res.getHeaderNames();
    });
    expect(answer.status).toBe(404);
    // Written straight into the head: nothing went through setHeader's map.
    expect(setHeaders).toEqual([]);
    expect(valuesOf(answer, 'x-request-id')).toEqual(['early-id']);
  });

  it('merges with headers set by setHeader, the set ones winning, as before', async () => {
    const answer = await answerWith((res) => {
      res.setHeader('X-Request-Id', 'set-id');
      res.setHeader('Content-Type', 'text/plain');
      res.writeHead(200, { 'Cache-Control': 'no-store' }).end();
    });
    expect(valuesOf(answer, 'x-request-id')).toEqual(['set-id']);
    expect(valuesOf(answer, 'x-content-type-options')).toEqual(['nosniff']);
    expect(valuesOf(answer, 'content-type')).toEqual(['text/plain']);
    expect(valuesOf(answer, 'cache-control')).toEqual(['no-store']);
  });

  it('merges with headers given as a list, the list winning', async () => {
    const answer = await answerWith((res) => res.writeHead(200, ['X-Request-Id', 'listed-id', 'Vary', 'Origin']).end());
    expect(valuesOf(answer, 'x-request-id')).toEqual(['listed-id']);
    expect(valuesOf(answer, 'vary')).toEqual(['Origin']);
    expect(valuesOf(answer, 'x-content-type-options')).toEqual(['nosniff']);
  });

  it('refuses an invalid early header value when the head is written, as setHeader would have', async () => {
    let thrown: unknown;
    const answer = await answerWith((res) => {
      setEarlyHeader(res, 'X-Bad', 'line\nbreak');
      try {
        res.writeHead(200);
      } catch (error) {
        thrown = error;
        (res as ServiceResponse).earlyHeaders.length = 0;
        res.writeHead(500).end();
      }
    });
    expect((thrown as NodeJS.ErrnoException).code).toBe('ERR_INVALID_CHAR');
    expect(answer.status).toBe(500);
  });

  it('reads an early header back, and a set one on a response of another server', () => {
    const res = new ServiceResponse({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1 } as IncomingMessage);
    setEarlyHeader(res, 'X-Request-Id', 'read-back');
    expect(earlyHeaderOf(res, 'X-Request-Id')).toBe('read-back');
    expect(res.getHeaderNames()).toEqual([]);
    const plain = new ServerResponse({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1 } as IncomingMessage);
    setEarlyHeader(plain, 'X-Request-Id', 'set-on-plain');
    expect(plain.getHeader('x-request-id')).toBe('set-on-plain');
    expect(earlyHeaderOf(plain, 'X-Request-Id')).toBe('set-on-plain');
  });
});

describe('the service’s answers', () => {
  const suite = useDemoServer({ PROFILE_LIMIT: '0' });
  let client: ReturnType<typeof rawClient>;
  beforeAll(() => {
    client = rawClient(suite.server.url);
  });
  afterAll(() => client.close());
  // Spied only around this suite's tests: the Yoga-handler project shares modules between files,
  // and a spy left behind would keep every response it saw.
  let setHeader: MockInstance<OutgoingMessage['setHeader']>;
  beforeEach(() => {
    setHeader = vi.spyOn(OutgoingMessage.prototype, 'setHeader');
  });
  afterEach(() => setHeader.mockRestore());
  /** setHeader calls on the server's responses (the test's own client requests call it too). */
  const setOnResponses = () => setHeader.mock.contexts.filter((context) => context instanceof ServerResponse).length;

  it.each([
    ['a profile', '/api/demo@me', 200],
    ['a missing profile', '/api/nobody@me', 404],
    ['a malformed name', '/api/not-a-name', 400],
    ['an owner check', '/api/owner-check?email=a@example.org&name=demo@me', 200],
  ])('%s: request id, nosniff and CORS once each, none set through setHeader', async (_, path, status) => {
    const answer = await client.send(path, { headers: { 'x-request-id': 'client-id-1' } });
    expect(answer.status).toBe(status);
    expect(valuesOf(answer, 'x-request-id')).toEqual(['client-id-1']);
    expect(valuesOf(answer, 'x-content-type-options')).toEqual(['nosniff']);
    expect(valuesOf(answer, 'access-control-allow-origin')).toEqual(['*']);
    expect(valuesOf(answer, 'access-control-expose-headers')).toHaveLength(1);
    expect(setOnResponses()).toBe(0);
  });

  it('a GraphQL answer: the same headers once each', async () => {
    const answer = await client.send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' }),
    });
    expect(answer.status).toBe(200);
    for (const name of ['x-request-id', 'x-content-type-options', 'access-control-allow-origin']) {
      expect(valuesOf(answer, name)).toHaveLength(1);
    }
    // Yoga's own handler sets its headers with setHeaders; the service's HTTP layer sets none.
    if (TEST_GRAPHQL_HTTP_PATH !== 'yoga') expect(setOnResponses()).toBe(0);
  });

  it('a route without CORS (/healthz) has the request id and nosniff, and no CORS header', async () => {
    const answer = await client.send('/healthz');
    expect(answer.status).toBe(200);
    expect(valuesOf(answer, 'x-request-id')).toHaveLength(1);
    expect(valuesOf(answer, 'x-content-type-options')).toEqual(['nosniff']);
    expect(valuesOf(answer, 'access-control-allow-origin')).toEqual([]);
  });
});
