/**
 * What the service makes of how a request is encoded and what it accepts, and the headers that
 * tell a browser how to read the answer, on both GraphQL HTTP paths (vitest.config.ts runs this
 * suite again on Yoga's handler): compressed bodies are decoded within the body limit or refused
 * with 415, non-UTF-8 charsets are refused with 415, `q=0` refuses a type, every JSON and SSE
 * answer says `nosniff`, and the CORS preflight allows trace context and the API key's headers.
 * The decoder itself is attacked in the last describe.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_REQUEST_BODY_BYTES } from '../src/graphql/transport/request-body-limit.js';
import { decodeBody, unsupportedCharset } from '../src/http/body-coding.js';
import { useDemoServer } from './support/app-server.js';
import { openRestStream } from './support/live-clients.js';
import { corsPreflight } from './support/raw-http.js';

const QUERY = JSON.stringify({ query: '{ profile(name: "demo@me") { name } }' });
const DEMO = { data: { profile: { name: 'demo@me' } } };

describe('request encodings and answer headers', () => {
  const suite = useDemoServer({ PROFILE_LIMIT: '0' });
  const endpoint = () => `${suite.server.url}/graphql`;
  const post = (body: Buffer | string, headers: Record<string, string>) =>
    fetch(endpoint(), {
      method: 'POST',
      body: typeof body === 'string' ? body : new Uint8Array(body),
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    });

  it('decodes gzip, deflate and br request bodies', async () => {
    const codings: Array<[string, (input: Buffer) => Buffer]> = [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
      ['GZIP', gzipSync],
    ];
    for (const [coding, compress] of codings) {
      const response = await post(compress(Buffer.from(QUERY)), { 'content-encoding': coding });
      expect(response.status, coding).toBe(200);
      expect(await response.json()).toEqual(DEMO);
    }
  });

  it('holds a decoded body to the body limit (413), and refuses other codings and broken data (415)', async () => {
    const bomb = gzipSync(
      Buffer.from(JSON.stringify({ query: `{ __typename }${' '.repeat(MAX_REQUEST_BODY_BYTES)}` })),
    );
    expect(bomb.byteLength).toBeLessThan(1024);
    const tooLarge = await post(bomb, { 'content-encoding': 'gzip' });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({
      error: `Request body too large, the limit is ${MAX_REQUEST_BODY_BYTES} bytes`,
    });

    for (const [coding, body] of [
      ['compress', Buffer.from(QUERY)],
      ['gzip, gzip', gzipSync(gzipSync(Buffer.from(QUERY)))],
      ['gzip', Buffer.from(QUERY)],
    ] as const) {
      const response = await post(body, { 'content-encoding': coding });
      expect(response.status, coding).toBe(415);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(((await response.json()) as { error: string }).error).toMatch(/Content-Encoding|not valid gzip/);
    }
  });

  it('refuses JSON bodies in another charset than UTF-8 with 415, and reads utf-8 ones', async () => {
    for (const charset of ['utf-16', 'iso-8859-1', 'UTF-16LE']) {
      const response = await post(Buffer.from(QUERY, charset === 'iso-8859-1' ? 'latin1' : 'utf16le'), {
        'content-type': `application/json; charset=${charset}`,
      });
      expect(response.status, charset).toBe(415);
      expect(((await response.json()) as { error: string }).error).toContain('charset');
    }
    const utf8 = await post(QUERY, { 'content-type': 'application/json; charset=UTF-8' });
    expect(utf8.status).toBe(200);
    expect(await utf8.json()).toEqual(DEMO);
  });

  it('decodes and refuses REST batch bodies the same way', async () => {
    const batch = (body: Buffer, headers: Record<string, string>) =>
      fetch(`${suite.server.url}/api/profiles`, {
        method: 'POST',
        body: new Uint8Array(body),
        headers: { 'content-type': 'application/json', ...headers },
      });
    const names = Buffer.from(JSON.stringify({ names: ['demo@me'] }));
    const decoded = await batch(gzipSync(names), { 'content-encoding': 'gzip' });
    expect(decoded.status).toBe(200);
    expect(JSON.stringify(await decoded.json())).toContain('"name":"demo@me"');
    expect((await batch(names, { 'content-encoding': 'zstd' })).status).toBe(415);
    expect((await batch(names, { 'content-type': 'application/json; charset=utf-16' })).status).toBe(415);
    const bomb = gzipSync(Buffer.from(JSON.stringify({ names: [], pad: ' '.repeat(MAX_REQUEST_BODY_BYTES) })));
    expect((await batch(bomb, { 'content-encoding': 'gzip' })).status).toBe(413);
  });

  it('answers no stream to a client that refuses it (q=0), and JSON when it accepts JSON besides', async () => {
    const subscription = JSON.stringify({ query: 'subscription { profileChanged(names: ["demo@me"]) { name } }' });
    const refused = await post(subscription, { accept: 'text/event-stream;q=0' });
    expect(refused.status).toBe(406);
    expect(refused.headers.get('content-type') ?? '').not.toContain('event-stream');
    await refused.body?.cancel();
    const json = await post(QUERY, { accept: 'text/event-stream;q=0, application/json' });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await json.json()).toEqual(DEMO);
  });

  it('says nosniff on JSON answers of /graphql and /api, errors included, and on both event streams', async () => {
    const answers = [
      await post(QUERY, {}),
      await fetch(`${endpoint()}?query=${encodeURIComponent('{ __typename }')}`),
      await post('{', {}),
      await fetch(`${suite.server.url}/api/demo@me`),
      await fetch(`${suite.server.url}/api/not-a-name`),
    ];
    for (const answer of answers) {
      expect(answer.headers.get('x-content-type-options'), answer.url).toBe('nosniff');
      await answer.body?.cancel();
    }
    const controller = new AbortController();
    const sse = await fetch(endpoint(), {
      method: 'POST',
      body: JSON.stringify({ query: 'subscription { profileChanged(names: ["demo@me"]) { name } }' }),
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(sse.headers.get('x-content-type-options')).toBe('nosniff');
    controller.abort();
    const rest = await openRestStream(suite.server.url, 'demo@me');
    expect(rest.headers['x-content-type-options']).toBe('nosniff');
    rest.stop();
  });

  it('allows trace context, baggage and the API key’s headers in CORS preflights of /graphql and /api', async () => {
    const asked = 'content-type, traceparent, tracestate, baggage, authorization, x-api-key';
    for (const url of [endpoint(), `${suite.server.url}/api/demo@me`]) {
      const preflight = await corsPreflight(url, url.endsWith('/graphql') ? 'POST' : 'GET', asked);
      expect(preflight.status).toBe(204);
      const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(asked.split(', ')));
    }
  });
});

describe('the body decoder under attack', () => {
  const limit = 1024;
  const tooLarge = 'too large';

  it('stops decompressing at the limit, whatever the ratio', async () => {
    for (const compress of [gzipSync, deflateSync, brotliCompressSync]) {
      const bomb = compress(Buffer.alloc(8 * 1024 * 1024));
      expect(bomb.byteLength).toBeLessThan(16 * 1024);
      const coding = compress === gzipSync ? 'gzip' : compress === deflateSync ? 'deflate' : 'br';
      expect(await decodeBody(bomb, coding, limit, tooLarge)).toEqual({ ok: false, status: 413, message: tooLarge });
    }
    expect(await decodeBody(gzipSync(Buffer.alloc(limit)), 'gzip', limit, tooLarge)).toMatchObject({ ok: true });
  });

  it('refuses stacked, unknown and truncated codings, and passes identity through', async () => {
    const body = Buffer.from('{}');
    expect(await decodeBody(gzipSync(gzipSync(body)), 'gzip, gzip', limit, tooLarge)).toMatchObject({ status: 415 });
    expect(await decodeBody(body, 'zstd', limit, tooLarge)).toMatchObject({ status: 415 });
    expect(await decodeBody(gzipSync(body).subarray(0, 8), 'gzip', limit, tooLarge)).toMatchObject({ status: 415 });
    expect(await decodeBody(body, 'identity', limit, tooLarge)).toEqual({ ok: true, body });
    expect(await decodeBody(body, undefined, limit, tooLarge)).toEqual({ ok: true, body });
  });

  it('refuses every charset but UTF-8, however it is written', () => {
    for (const type of [
      'application/json; charset=utf-16',
      'application/json;CHARSET="ISO-8859-1"',
      'application/json; charset=',
    ]) {
      expect(unsupportedCharset(type), type).toMatchObject({ status: 415 });
    }
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset="UTF-8"',
      null,
    ]) {
      expect(unsupportedCharset(type), String(type)).toBeUndefined();
    }
  });
});
