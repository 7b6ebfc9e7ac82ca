/**
 * The one SQL statement the benchmark's yardsticks answer a profile lookup with (the bare
 * `node:http` server and the Fastify + Mercurius server), so both measure the same database work.
 */
import postgres from 'postgres';

export interface ProfileRow {
  name: string;
  description: string;
  image: string;
  level: number;
  records: Record<string, { type: string; value: unknown }>;
}

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');
export const sql = postgres(databaseUrl, { max: Number(process.env.DB_POOL_SIZE ?? 10) });

/**
 * The profile of a canonical name, with its records as one JSON object: the records text the
 * importer stores with the profile, as the service reads it (src/db/records-text.ts), or built
 * from `records` for a row without it.
 */
export async function lookupProfile(name: string): Promise<ProfileRow | undefined> {
  const rows = await sql<ProfileRow[]>`
    select p.name, p.description, p.image, p.level,
      coalesce(
        p.records_json::json,
        (select json_object_agg(r.key, json_build_object('type', r.type, 'value', r.value) order by r.key)
           from records r where r.profile_id = p.id),
        '{}'::json) as records
    from profiles p
    where p.name = ${name}`;
  return rows[0];
}
