/**
 * The benchmark's yardstick: the smallest server that answers the profile lookup correctly,
 * `node:http` and postgres.js with one hand-written query, no framework. `npm run bench` compares
 * the service's `/api/{name_id}` with it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lookupProfile as lookup, sql } from './profile-statement.js';

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (!path.startsWith('/api/')) {
    res.writeHead(404).end();
    return;
  }
  const name = decodeURIComponent(path.slice(5)).normalize('NFC').toLowerCase();
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
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => void sql.end().then(() => process.exit(0))));
