/**
 * The benchmark's ceiling: `node:http` answering every request with the same ready JSON body (a
 * typical profile document, with the headers a JSON API sends). No routing, no database: what
 * the machine can do at all with this load generator. The avatar part serves a ready image the
 * same way (STATIC_BODY_BASE64, STATIC_CONTENT_TYPE), and its origin's JPEG from a file
 * (STATIC_BODY_FILE: an environment variable holds at most 128 KB on Linux).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

function bodyToServe(): Buffer {
  const { STATIC_BODY, STATIC_BODY_BASE64, STATIC_BODY_FILE } = process.env;
  if (STATIC_BODY_FILE !== undefined) return readFileSync(STATIC_BODY_FILE);
  if (STATIC_BODY_BASE64 !== undefined) return Buffer.from(STATIC_BODY_BASE64, 'base64');
  return Buffer.from(STATIC_BODY ?? '{"name":"demo@me"}');
}
const body = bodyToServe();
const contentType = process.env.STATIC_CONTENT_TYPE ?? 'application/json; charset=utf-8';

const server = createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': body.length });
  res.end(body);
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
