/**
 * The GraphQL anchor of `npm run bench`: Fastify + Mercurius with compiled execution (graphql-jit
 * from the first execution), the same SQL statement as bench/baseline-server.ts and the fields the
 * benchmark selects (`profile(name:) { name description image level records { key type raw } }`).
 * What a GraphQL server on Node costs when it does nothing but this lookup; the service's GraphQL
 * figures are reported as a ratio of it.
 */
import Fastify from 'fastify';
import mercurius from 'mercurius';
import { lookupProfile, type ProfileRow as Row, sql } from './profile-statement.js';

const schema = `
  type Record { key: String! type: String! raw: String! }
  type Profile { name: String! description: String image: String level: Int! records: [Record!]! }
  type Query { profile(name: String!): Profile }
`;

const resolvers = {
  Query: {
    profile: (_root: unknown, { name }: { name: string }): Promise<Row | undefined> =>
      lookupProfile(name.normalize('NFC').toLowerCase()),
  },
  Profile: {
    records: (row: Row) =>
      Object.entries(row.records).map(([key, record]) => ({
        key,
        type: record.type,
        raw: JSON.stringify(record.value),
      })),
  },
};

const app = Fastify({ logger: false });
await app.register(mercurius, { schema, resolvers, jit: 1 });
const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ msg: 'listening', url: address })}\n`);
process.on('SIGTERM', () => void app.close().then(() => sql.end().then(() => process.exit(0))));
