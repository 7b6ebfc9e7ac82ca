/**
 * The GraphQL anchor of `npm run bench`: Fastify + Mercurius with compiled execution (graphql-jit
 * from the first execution), the same SQL statement as bench/baseline-server.ts and the fields the
 * benchmark selects (`profile(name:) { name description image level records { key type raw } }`).
 * What a GraphQL server on Node costs when it does nothing but this lookup; the service's GraphQL
 * figures are reported as a ratio of it.
 */
import Fastify from 'fastify';
import mercurius from 'mercurius';
import postgres from 'postgres';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');
const sql = postgres(databaseUrl, { max: Number(process.env.DB_POOL_SIZE ?? 10) });

interface Row {
  name: string;
  description: string;
  image: string;
  level: number;
  records: Record<string, { type: string; value: unknown }>;
}

const schema = `
  type Record { key: String! type: String! raw: String! }
  type Profile { name: String! description: String image: String level: Int! records: [Record!]! }
  type Query { profile(name: String!): Profile }
`;

const resolvers = {
  Query: {
    profile: async (_root: unknown, { name }: { name: string }): Promise<Row | undefined> => {
      const rows = await sql<Row[]>`
        select p.name, p.description, p.image, p.level,
          coalesce(
            (select json_object_agg(r.key, json_build_object('type', r.type, 'value', r.value) order by r.key)
               from records r where r.profile_id = p.id),
            '{}'::json) as records
        from profiles p
        where p.name = ${name.normalize('NFC').toLowerCase()}`;
      return rows[0];
    },
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
