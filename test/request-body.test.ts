/**
 * The request body reader (src/http/request-body.ts) attacked over real sockets: a body taken at
 * once from the request's buffer must be the same bytes, for the same request, as one read through
 * the stream's events, whatever the packets, the coding, the size or the pipelining; a body over
 * the limit is refused, declared or chunked; a client that goes away mid-body is noticed.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BodyResult, readBody } from '../src/http/request-body.js';

const LIMIT = 256 * 1024;

interface Answer {
  ok: boolean;
  reason?: string;
  length?: number;
  sha256?: string;
  /** What the request line named: the test checks each body went to its own request. */
  path?: string;
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

describe('readBody', () => {
  let server: Server;
  let port = 0;
  /** Results of bodies whose client went away (no answer can reach it). */
  const unanswered: BodyResult[] = [];
  let unansweredSeen: () => void = () => {};
  /** Resolvers of `headArrived`, by request path. */
  const heads = new Map<string, () => void>();

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      heads.get(req.url ?? '')?.();
      // An awaited step first, as the API key or rate limit checks can be, on the `/late` path.
      const before = req.url?.startsWith('/late') ? new Promise((resolve) => setTimeout(resolve, 20)) : undefined;
      void Promise.resolve(before)
        .then(() => readBody(req, LIMIT))
        .then((read) => {
          if (!read.ok && read.reason === 'aborted') {
            unanswered.push(read);
            unansweredSeen();
            return;
          }
          const answer: Answer = read.ok
            ? { ok: true, length: read.body.byteLength, sha256: sha256(read.body), path: req.url }
            : { ok: false, reason: read.reason, path: req.url };
          const text = JSON.stringify(answer);
          res.writeHead(read.ok ? 200 : 413, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
            ...(read.ok ? {} : { connection: 'close' }),
          });
          res.end(text);
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const open = async (): Promise<Socket> => {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.setNoDelay(true);
    return socket;
  };

  /** Reads `count` answers off the socket (each a JSON body with a Content-Length). */
  const answersOf = (socket: Socket, count: number): Promise<Answer[]> =>
    new Promise((resolve, reject) => {
      let received = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const answers: Answer[] = [];
        let rest = received;
        while (answers.length < count) {
          const headEnd = rest.indexOf('\r\n\r\n');
          if (headEnd < 0) return;
          const length = Number(/content-length: (\d+)/i.exec(rest.subarray(0, headEnd).toString('latin1'))?.[1]);
          if (rest.byteLength < headEnd + 4 + length) return;
          answers.push(JSON.parse(rest.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8')) as Answer);
          rest = rest.subarray(headEnd + 4 + length);
        }
        socket.off('data', onData);
        resolve(answers);
      };
      socket.on('data', onData);
      socket.once('error', reject);
    });

  const head = (path: string, headers: Record<string, string | number>) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Resolves once the server has the head of the request for `path` (its handler runs, the body is being read). */
  const headArrived = (path: string) => new Promise<void>((resolve) => heads.set(path, resolve));

  it('reads a body sent with its headers in one packet, before and after an awaited step', async () => {
    const body = JSON.stringify({ query: '{ profile(name: "alice@acme") { name } }' });
    for (const path of ['/now', '/late']) {
      const socket = await open();
      const answers = answersOf(socket, 1);
      socket.write(head(path, { 'content-length': Buffer.byteLength(body) }) + body);
      expect(await answers, path).toEqual([{ ok: true, length: body.length, sha256: sha256(body), path }]);
      socket.destroy();
    }
  });

  it('reads a body that comes after its headers, in parts, with a character split between them', async () => {
    const body = Buffer.from(
      JSON.stringify({ query: '{ profile(name: "zoë@acme") { name } }', x: '日本語'.repeat(50) }),
    );
    const split = body.indexOf(Buffer.from('ë')) + 1;
    const socket = await open();
    const answers = answersOf(socket, 1);
    const reading = headArrived('/parts');
    socket.write(head('/parts', { 'content-length': body.byteLength }));
    await reading;
    socket.write(body.subarray(0, split));
    // Apart in time, so that the two parts arrive in two reads (the test's scenario, not a wait).
    await pause(30);
    socket.write(body.subarray(split));
    expect(await answers).toEqual([{ ok: true, length: body.byteLength, sha256: sha256(body), path: '/parts' }]);
    socket.destroy();
  });

  it('reads a chunked body, and an empty one', async () => {
    const socket = await open();
    const answers = answersOf(socket, 2);
    const first = headArrived('/chunked');
    socket.write(`${head('/chunked', { 'transfer-encoding': 'chunked' })}5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n`);
    await first;
    socket.write(head('/empty', { 'content-length': 0 }));
    expect(await answers).toEqual([
      { ok: true, length: 11, sha256: sha256('hello world'), path: '/chunked' },
      { ok: true, length: 0, sha256: sha256(''), path: '/empty' },
    ]);
    socket.destroy();
  });

  it('reads a body larger than the stream buffers at once, sent in one write and sent slowly', async () => {
    const body = Buffer.alloc(200 * 1024, 'abcdefghij');
    for (const slowly of [false, true]) {
      const socket = await open();
      const answers = answersOf(socket, 1);
      socket.write(head('/large', { 'content-length': body.byteLength }));
      if (slowly) {
        for (let at = 0; at < body.byteLength; at += 50_000) {
          socket.write(body.subarray(at, at + 50_000));
          await pause(5); // sent slowly: the test's scenario, not a wait
        }
      } else socket.write(body);
      expect(await answers, `slowly: ${slowly}`).toEqual([
        { ok: true, length: body.byteLength, sha256: sha256(body), path: '/large' },
      ]);
      socket.destroy();
    }
  });

  it('gives each of several pipelined requests in one packet its own body', async () => {
    const bodies = ['{"a":1}', '{"bb":22}', '', '{"ccc":333}'];
    const socket = await open();
    const answers = answersOf(socket, bodies.length);
    socket.write(bodies.map((body, i) => head(`/pipelined/${i}`, { 'content-length': body.length }) + body).join(''));
    expect(await answers).toEqual(
      bodies.map((body, i) => ({ ok: true, length: body.length, sha256: sha256(body), path: `/pipelined/${i}` })),
    );
    socket.destroy();
  });

  it('refuses a declared length over the limit before reading, and a chunked body once it passes it', async () => {
    const declared = await open();
    const declaredAnswer = answersOf(declared, 1);
    declared.write(head('/declared', { 'content-length': LIMIT + 1 }));
    expect(await declaredAnswer).toEqual([{ ok: false, reason: 'too-large', path: '/declared' }]);
    declared.destroy();

    const chunked = await open();
    const chunkedAnswer = answersOf(chunked, 1);
    chunked.write(head('/chunked-large', { 'transfer-encoding': 'chunked' }));
    const chunk = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 5; i++) chunked.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    expect(await chunkedAnswer).toEqual([{ ok: false, reason: 'too-large', path: '/chunked-large' }]);
    chunked.destroy();
  });

  it('notices a client that goes away before its body is complete', async () => {
    const seen = new Promise<void>((resolve) => {
      unansweredSeen = resolve;
    });
    const socket = await open();
    const reading = headArrived('/gone');
    socket.write(`${head('/gone', { 'content-length': 100 })}{"only":"part`);
    await reading;
    socket.destroy();
    await seen;
    expect(unanswered).toEqual([{ ok: false, reason: 'aborted' }]);
  });
});
