/**
 * How writers tell running servers which profiles changed: PostgreSQL NOTIFY on one channel.
 *
 * A writer calls `notifyProfileChanges` inside its transaction; PostgreSQL delivers the
 * notifications when (and only if) the transaction commits, so a listener never hears of a
 * change it cannot read yet, and a rolled-back import tells nobody anything. Every server
 * process LISTENs on the channel and evicts what it cached for those names.
 *
 * A payload names the change and what changed: `{"id": <change id>, "names": [<canonical name
 * IDs>]}` or `{"id": <change id>, "everything": true}`, with `"at"`: the writer's clock (ms since
 * the epoch) just before its commit, from which the purger measures commit-to-purge times. PostgreSQL refuses payloads of 8000 bytes
 * or more, so long lists are split over several notifications of the same id; past
 * MAX_NAMED_CHANGES names one "everything" is cheaper for the listeners than the list. Writers
 * by hand may send the older forms, a bare JSON array of names or EVERYTHING (`*`).
 *
 * After its commit the writer sends one more notification, `{"committed": <change id>, "lsn":
 * <position>}`: the primary's WAL position then, which covers the commit. Listeners that read
 * from replicas wait for a replica to replay it before they read changed data there
 * (./freshness.ts); a writer that dies before sending it is covered by the listeners' heartbeats.
 */
import { randomUUID } from 'node:crypto';
import { isNameList } from '../names/name-id.js';
import { sql } from './drizzle.js';
import type { Database } from './schema.js';
import { parseWalPosition, type WalPosition } from './wal-position.js';

/** The channel every writer of profiles notifies and every server listens on. */
export const PROFILE_CHANGES_CHANNEL = 'name_profile_changes';

/** The payload that means "any profile may have changed". */
export const EVERYTHING = '*';

/** Below PostgreSQL's limit of 8000 bytes, with room to spare. */
const MAX_PAYLOAD_BYTES = 7900;

/** Past this many changed names, listeners are told that everything changed. */
export const MAX_NAMED_CHANGES = 2000;

/** What changed; `id` when the writer will also tell the commit's position. */
export type ProfileChange =
  | { kind: 'names'; names: string[]; id?: string; at?: number }
  | { kind: 'everything'; id?: string; at?: number };

/** An API key was created or revoked. */
export interface ApiKeyChange {
  kind: 'api-key';
  keyId: string;
}

/** A notification: a change, or the position after the commit of change `id`. */
export type ChangeNotification =
  | ProfileChange
  | ApiKeyChange
  | { kind: 'committed'; id: string; position: WalPosition };

/** The payloads announcing that `names` changed (canonical name IDs), as change `id`. */
function changePayloads(id: string, names: readonly string[] | typeof EVERYTHING, at: number = Date.now()): string[] {
  if (names === EVERYTHING || names.length > MAX_NAMED_CHANGES) return [JSON.stringify({ id, at, everything: true })];
  const frame = Buffer.byteLength(JSON.stringify({ id, at, names: [] }));
  const payloads: string[] = [];
  let chunk: string[] = [];
  let bytes = frame;
  for (const name of names) {
    const size = Buffer.byteLength(JSON.stringify(name)) + 1; // and its comma
    if (chunk.length > 0 && bytes + size > MAX_PAYLOAD_BYTES) {
      payloads.push(JSON.stringify({ id, at, names: chunk }));
      chunk = [];
      bytes = frame;
    }
    chunk.push(name);
    bytes += size;
  }
  if (chunk.length > 0) payloads.push(JSON.stringify({ id, at, names: chunk }));
  return payloads;
}

/**
 * What a payload says. Anything that is not a well-formed change counts as "everything": a
 * listener that cannot tell what changed must assume the worst.
 */
export function parseChangePayload(payload: string): ChangeNotification {
  if (payload === EVERYTHING) return { kind: 'everything' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return { kind: 'everything' };
  }
  if (isNameList(parsed)) return { kind: 'names', names: parsed };
  if (typeof parsed !== 'object' || parsed === null) return { kind: 'everything' };
  const { id, names, everything, committed, lsn, at, apiKey } = parsed as Record<string, unknown>;
  if (typeof apiKey === 'string') return { kind: 'api-key', keyId: apiKey };
  if (typeof committed === 'string' && typeof lsn === 'string') {
    const position = parseWalPosition(lsn);
    if (position !== undefined) return { kind: 'committed', id: committed, position };
  }
  const changeId = {
    ...(typeof id === 'string' ? { id } : {}),
    ...(typeof at === 'number' && Number.isFinite(at) ? { at } : {}),
  };
  if (isNameList(names) && everything === undefined) return { kind: 'names', names, ...changeId };
  return { kind: 'everything', ...changeId };
}

/** A new change id: the importer announces a change and, after its commit, its position under it. */
export const newChangeId = (): string => randomUUID();

/**
 * Announces changed profiles as change `id`. Call it inside the transaction that changed them:
 * the notifications go out when it commits. `EVERYTHING` when the writer does not know the names.
 */
export async function notifyProfileChanges(
  db: Database,
  id: string,
  names: readonly string[] | typeof EVERYTHING,
): Promise<void> {
  if (names !== EVERYTHING && names.length === 0) return;
  for (const payload of changePayloads(id, names)) {
    await db.execute(sql`select pg_notify(${PROFILE_CHANGES_CHANNEL}, ${payload})`);
  }
}

/**
 * Tells listeners where change `id` ends in the WAL. Call it after the transaction committed:
 * the primary's insert position then lies past the commit record.
 */
export async function notifyCommitted(db: Database, id: string): Promise<void> {
  await db.execute(
    sql`select pg_notify(${PROFILE_CHANGES_CHANNEL}, json_build_object('committed', ${id}::text, 'lsn', pg_current_wal_insert_lsn()::text)::text)`,
  );
}

/**
 * Announces that API key `keyId` was created or revoked. Call it inside the transaction that
 * wrote it: every server then drops the keys it holds in memory when the change commits.
 */
export async function notifyApiKeyChange(db: Database, keyId: string): Promise<void> {
  await db.execute(sql`select pg_notify(${PROFILE_CHANGES_CHANNEL}, ${JSON.stringify({ apiKey: keyId })})`);
}
