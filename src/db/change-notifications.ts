/**
 * How writers tell running servers which profiles changed: PostgreSQL NOTIFY on one channel.
 *
 * A writer calls `notifyProfileChanges` inside its transaction; PostgreSQL delivers the
 * notifications when (and only if) the transaction commits, so a listener never hears of a
 * change it cannot read yet, and a rolled-back import tells nobody anything. Every server
 * process LISTENs on the channel and evicts what it cached for those names.
 *
 * A payload is either a JSON array of canonical name IDs or EVERYTHING. PostgreSQL refuses
 * payloads of 8000 bytes or more, so long lists are split over several notifications; past
 * MAX_NAMED_CHANGES names one EVERYTHING is cheaper for the listeners than the list.
 */
import { sql } from 'drizzle-orm';
import type { Database } from './database.js';

/** The channel every writer of profiles notifies and every server listens on. */
export const PROFILE_CHANGES_CHANNEL = 'name_profile_changes';

/** The payload that means "any profile may have changed". */
export const EVERYTHING = '*';

/** Below PostgreSQL's limit of 8000 bytes, with room to spare. */
const MAX_PAYLOAD_BYTES = 7900;

/** Past this many changed names, listeners are told that everything changed. */
export const MAX_NAMED_CHANGES = 2000;

export type ProfileChange = { kind: 'names'; names: string[] } | { kind: 'everything' };

/** The payloads announcing that `names` changed (canonical name IDs). */
export function changePayloads(names: readonly string[] | typeof EVERYTHING): string[] {
  if (names === EVERYTHING || names.length > MAX_NAMED_CHANGES) return [EVERYTHING];
  const payloads: string[] = [];
  let chunk: string[] = [];
  let bytes = 2; // the brackets
  for (const name of names) {
    const size = Buffer.byteLength(JSON.stringify(name)) + 1; // and its comma
    if (chunk.length > 0 && bytes + size > MAX_PAYLOAD_BYTES) {
      payloads.push(JSON.stringify(chunk));
      chunk = [];
      bytes = 2;
    }
    chunk.push(name);
    bytes += size;
  }
  if (chunk.length > 0) payloads.push(JSON.stringify(chunk));
  return payloads;
}

/**
 * What a payload says. Anything that is not a well-formed list of names counts as "everything":
 * a listener that cannot tell what changed must assume the worst.
 */
export function parseChangePayload(payload: string): ProfileChange {
  if (payload === EVERYTHING) return { kind: 'everything' };
  try {
    const parsed: unknown = JSON.parse(payload);
    if (Array.isArray(parsed) && parsed.every((name) => typeof name === 'string')) {
      return { kind: 'names', names: parsed };
    }
  } catch {
    // falls through
  }
  return { kind: 'everything' };
}

/**
 * Announces changed profiles. Call it inside the transaction that changed them: the
 * notifications go out when it commits. `EVERYTHING` when the writer does not know the names.
 */
export async function notifyProfileChanges(db: Database, names: readonly string[] | typeof EVERYTHING): Promise<void> {
  if (names !== EVERYTHING && names.length === 0) return;
  for (const payload of changePayloads(names)) {
    await db.execute(sql`select pg_notify(${PROFILE_CHANGES_CHANNEL}, ${payload})`);
  }
}
