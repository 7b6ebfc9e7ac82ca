/**
 * The benchmark's yardstick: the smallest server that answers the profile lookup correctly,
 * `node:http` and postgres.js with one hand-written query, no framework. `npm run bench` compares
 * the service's `/api/{name_id}` with it.
 *
 * It also takes the benchmark's GraphQL request as it is (`POST /graphql`, the JSON body with the
 * name in `variables.n`) and answers it with the same lookup and document as the GET: no GraphQL
 * at all, so that what a POST with that body costs node:http over a GET is measured on its own
 * (bench/README.md, "Issue 25, sixth round").
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lookupProfile as lookup, sql } from './profile-statement.js';

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (req.method === 'POST' && path === '/graphql') {
    answerPost(req, res);
    return;
  }
  if (!path.startsWith('/api/')) {
    res.writeHead(404).end();
    return;
  }
  answer(res, decodeURIComponent(path.slice(5)));
});

/** The body read as a small JSON body is read: chunks until its end, then one parse. */
function answerPost(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const name = nameInBody(Buffer.concat(chunks).toString('utf8'));
    if (name === undefined) res.writeHead(400).end();
    else answer(res, name);
  });
}

/** `variables.n` of a GraphQL request's JSON body; undefined for any other body (answered 400, not a crash). */
function nameInBody(text: string): string | undefined {
  try {
    const name = (JSON.parse(text) as { variables?: { n?: unknown } } | null)?.variables?.n;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

function answer(res: ServerResponse, given: string): void {
  const name = given.normalize('NFC').toLowerCase();
  lookup(name).then(
    (row) => {
      if (!row) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"Profile not found"}');
        return;
      }
      const body = JSON.stringify({
        name: row.name,
        description: row.description,
        image: row.image,
        attributes: [
          { trait_type: 'domain', value: row.name },
          { trait_type: 'level', value: row.level },
          { trait_type: 'length', value: [...row.name].length },
        ],
        records: row.records,
      });
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' }).end(body);
    },
    () => res.writeHead(500).end(),
  );
}

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => void sql.end().then(() => process.exit(0))));
