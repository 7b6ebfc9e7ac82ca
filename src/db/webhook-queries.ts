/**
 * The webhook tables (./schema.ts): endpoints and their filters, the outbox of events, and the
 * deliveries log. docs/webhooks.md says what the rules are; this module is how they are kept in
 * SQL, so that several processes share the work through the database:
 *
 * - **Queueing** (`queueEvents`): the change log after each active endpoint's position is turned
 *   into waiting events, one per endpoint and name (a newer change replaces a waiting event), and
 *   the positions move on, in one transaction that one process at a time runs (a transaction-level
 *   advisory lock that the others skip). A crash before it commits loses nothing: the positions
 *   did not move either.
 * - **Claiming** (`claimEvents`): due events are taken for delivery by one process until their
 *   claim expires, at most `concurrency` at once per endpoint across processes (the endpoint's
 *   row is locked while slots are counted) and one at a time per endpoint and name. A claim that
 *   expired (its process died) is given back by the next queueing pass.
 * - **Settling** (`settleDelivered`, `settleFailed`): only by the claim's holder (its token).
 *
 * **Lock order.** A transaction that locks an endpoint's row and writes its events locks the
 * row first (several in id order), and only then the events: queueing (it moves the endpoints'
 * positions), claiming (it counts the endpoint's free slots under the lock, and skips endpoints
 * locked by others), a failed delivery's settlement and a delivered one's that ends the
 * endpoint's failing streak (both write the endpoint). A transaction that writes one event and
 * no endpoint (most delivered settlements, a claim given back) locks no endpoint: it waits for
 * nothing once it holds its event, so it cannot close a cycle, and deliveries of one endpoint
 * do not queue behind one another on its row. Without one order, a queueing pass holding an
 * event while it waits for its endpoint and a claim holding the endpoint while it waits for the
 * event would each wait for the other, and PostgreSQL would end one with a deadlock error.
 */
import { endOfLog, type LogPosition } from './change-log.js';
import { sql } from './drizzle.js';
import { textArrayLiteral } from './postgres-deadlines.js';
import type { Database } from './schema.js';

/** The advisory lock of the queueing pass: the service's key ("nps2") and the webhooks'. */
const QUEUE_LOCK = sql`1852863282, 2`;

export type EndpointStatus = 'active' | 'disabled';

export interface EndpointRow {
  id: string;
  apiKeyId: string;
  url: string;
  /** Mask of the change kinds wanted: 1 created, 2 updated, 4 removed. */
  events: number;
  description: string | null;
  status: EndpointStatus;
  disabledReason: string | null;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  createdAt: Date;
  failingSince: Date | null;
  names: string[];
  namespaces: string[];
}

interface RawEndpoint extends Record<string, unknown> {
  id: string;
  api_key_id: string;
  url: string;
  events: number;
  description: string | null;
  status: EndpointStatus;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | Date | null;
  created_at: string | Date;
  failing_since: string | Date | null;
  names: string | string[] | null;
  namespaces: string | string[] | null;
}

async function rows<T extends Record<string, unknown>>(db: Database, statement: ReturnType<typeof sql>): Promise<T[]> {
  const result = (await db.execute(statement)) as unknown as T[] | { rows: T[] };
  return Array.isArray(result) ? result : result.rows;
}

const date = (value: string | Date | null): Date | null =>
  value === null ? null : value instanceof Date ? value : new Date(value);

/**
 * Whether an endpoint's deliveries are failing now; with `lock`, its row is locked first (the
 * lock order above: `for no key update`, what an UPDATE of the row takes anyway).
 */
async function endpointFailing(db: Database, endpointId: string, lock: boolean): Promise<boolean> {
  const [row] = await rows<{ failing: boolean }>(
    db,
    lock
      ? sql`select failing_since is not null as failing from webhook_endpoints where id = ${endpointId} for no key update`
      : sql`select failing_since is not null as failing from webhook_endpoints where id = ${endpointId}`,
  );
  return row?.failing === true;
}

/** A JSON array of text, as json_agg gives it (text on postgres.js, parsed on PGlite). */
const textList = (value: string | string[] | null): string[] =>
  value === null ? [] : Array.isArray(value) ? value : (JSON.parse(value) as string[]);

function endpointOf(row: RawEndpoint): EndpointRow {
  return {
    id: row.id,
    apiKeyId: row.api_key_id,
    url: row.url,
    events: Number(row.events),
    description: row.description,
    status: row.status,
    disabledReason: row.disabled_reason,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: date(row.previous_secret_until),
    createdAt: date(row.created_at) ?? new Date(0),
    failingSince: date(row.failing_since),
    names: textList(row.names).sort(),
    namespaces: textList(row.namespaces).sort(),
  };
}

/** The endpoints a condition selects, with their filters. */
function selectEndpoints(where: ReturnType<typeof sql>) {
  return sql`
    select ep.*,
      (select json_agg(f.name)::text from webhook_filters f where f.endpoint_id = ep.id and f.name is not null) as names,
      (select json_agg(f.namespace)::text from webhook_filters f where f.endpoint_id = ep.id and f.namespace is not null) as namespaces
    from webhook_endpoints ep
    where ${where}
    order by ep.created_at, ep.id`;
}

/** Of one API key, or of any (operators), by id. */
const ownedBy = (apiKeyId: string | undefined, id: string) =>
  apiKeyId === undefined ? sql`ep.id = ${id}` : sql`ep.id = ${id} and ep.api_key_id = ${apiKeyId}`;

export interface NewEndpoint {
  id: string;
  apiKeyId: string;
  url: string;
  events: number;
  description: string | null;
  /** The stored form of its secret (src/webhooks/secrets.ts). */
  secret: string;
  names: readonly string[];
  namespaces: readonly string[];
}

/**
 * Adds an endpoint that starts at the current end of the change log; `too-many` when the key has
 * `maxPerKey` already (the key's row is locked meanwhile, so two creations cannot both pass).
 */
export async function insertEndpoint(
  db: Database,
  endpoint: NewEndpoint,
  maxPerKey: number,
): Promise<EndpointRow | 'too-many'> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select id from api_keys where id = ${endpoint.apiKeyId} for update`);
    const [count] = await rows<{ count: number }>(
      tx,
      sql`select count(*)::int as count from webhook_endpoints where api_key_id = ${endpoint.apiKeyId}`,
    );
    if ((count?.count ?? 0) >= maxPerKey) return 'too-many';
    const start = await endOfLog(tx);
    await tx.execute(sql`
      insert into webhook_endpoints (id, api_key_id, url, events, description, secret, fed_commit_seq, fed_seq)
      values (${endpoint.id}, ${endpoint.apiKeyId}, ${endpoint.url}, ${endpoint.events}, ${endpoint.description},
              ${endpoint.secret}, ${start.commitSeq}, ${start.seq})`);
    if (endpoint.names.length > 0) {
      await tx.execute(sql`
        insert into webhook_filters (endpoint_id, name)
        select ${endpoint.id}, name from unnest(${textArrayLiteral(endpoint.names)}::text[]) as name`);
    }
    if (endpoint.namespaces.length > 0) {
      await tx.execute(sql`
        insert into webhook_filters (endpoint_id, namespace)
        select ${endpoint.id}, namespace from unnest(${textArrayLiteral(endpoint.namespaces)}::text[]) as namespace`);
    }
    const [created] = await rows<RawEndpoint>(tx, selectEndpoints(sql`ep.id = ${endpoint.id}`));
    if (created === undefined) throw new Error('the endpoint just inserted is not there');
    return endpointOf(created);
  });
}

/** An API key's endpoints (every endpoint for operators: `apiKeyId` undefined), oldest first. */
export async function listEndpoints(db: Database, apiKeyId?: string): Promise<EndpointRow[]> {
  const where = apiKeyId === undefined ? sql`true` : sql`ep.api_key_id = ${apiKeyId}`;
  return (await rows<RawEndpoint>(db, selectEndpoints(where))).map(endpointOf);
}

export async function findEndpoint(
  db: Database,
  apiKeyId: string | undefined,
  id: string,
): Promise<EndpointRow | undefined> {
  const [row] = await rows<RawEndpoint>(db, selectEndpoints(ownedBy(apiKeyId, id)));
  return row === undefined ? undefined : endpointOf(row);
}

/** Removes an endpoint with its filters, events and deliveries; false when there was none. */
export async function deleteEndpoint(db: Database, apiKeyId: string | undefined, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const deleted = await rows<{ id: string }>(
      tx,
      sql`delete from webhook_endpoints ep where ${ownedBy(apiKeyId, id)} returning id`,
    );
    if (deleted.length === 0) return false;
    await tx.execute(sql`delete from webhook_filters where endpoint_id = ${id}`);
    await tx.execute(sql`delete from webhook_events where endpoint_id = ${id}`);
    await tx.execute(sql`delete from webhook_deliveries where endpoint_id = ${id}`);
    return true;
  });
}

/**
 * Enables (its failures forgotten) or disables an endpoint, with the reason; undefined when
 * there is none. An endpoint enabled again goes on from its position: what changed while it was
 * disabled is delivered, coalesced per name.
 */
export async function setEndpointStatus(
  db: Database,
  apiKeyId: string | undefined,
  id: string,
  status: EndpointStatus,
  reason: string | null = null,
): Promise<EndpointRow | undefined> {
  await db.execute(sql`
    update webhook_endpoints ep set status = ${status}, disabled_reason = ${status === 'active' ? null : reason},
      failing_since = case when ${status} = 'active' then null else ep.failing_since end
    where ${ownedBy(apiKeyId, id)}`);
  return findEndpoint(db, apiKeyId, id);
}

/** A new secret; the current one signs beside it until `previousUntil`. */
export async function rotateSecret(
  db: Database,
  apiKeyId: string,
  id: string,
  stored: string,
  previousUntil: Date,
): Promise<EndpointRow | undefined> {
  await db.execute(sql`
    update webhook_endpoints ep set previous_secret = ep.secret, previous_secret_until = ${previousUntil.toISOString()}::timestamptz,
      secret = ${stored}
    where ${ownedBy(apiKeyId, id)}`);
  return findEndpoint(db, apiKeyId, id);
}

/** Queues again every change after `after` (the endpoint's position moves back to it); false when there is no endpoint. */
export async function replayFrom(db: Database, apiKeyId: string, id: string, after: LogPosition): Promise<boolean> {
  const updated = await rows<{ id: string }>(
    db,
    sql`
      update webhook_endpoints ep set fed_commit_seq = ${after.commitSeq}, fed_seq = ${after.seq}
      where ${ownedBy(apiKeyId, id)} and (ep.fed_commit_seq, ep.fed_seq) > (${after.commitSeq}, ${after.seq})
      returning id`,
  );
  return updated.length > 0 || (await findEndpoint(db, apiKeyId, id)) !== undefined;
}

export interface DeliveryRow {
  eventId: string;
  kind: number;
  name: string;
  attempt: number;
  at: Date;
  status: number | null;
  durationMs: number;
  error: string | null;
  nextAttemptAt: Date | null;
}

/** The latest attempts, newest first. */
export async function listDeliveries(db: Database, endpointId: string, limit: number): Promise<DeliveryRow[]> {
  const found = await rows<{
    event_id: string;
    kind: number;
    name: string;
    attempt: number;
    at: string | Date;
    status: number | null;
    duration_ms: number;
    error: string | null;
    next_attempt_at: string | Date | null;
  }>(
    db,
    sql`
      select event_id, kind, name, attempt, at, status, duration_ms, error, next_attempt_at
      from webhook_deliveries where endpoint_id = ${endpointId} order by id desc limit ${limit}`,
  );
  return found.map((row) => ({
    eventId: row.event_id,
    kind: Number(row.kind),
    name: row.name,
    attempt: Number(row.attempt),
    at: date(row.at) ?? new Date(0),
    status: row.status === null ? null : Number(row.status),
    durationMs: Number(row.duration_ms),
    error: row.error,
    nextAttemptAt: date(row.next_attempt_at),
  }));
}

/** What a queueing pass did; undefined when another process was queueing. */
export interface QueuePass {
  /** Events queued or replaced. */
  queued: number;
  /** Whether entries of the log may remain after this pass (run another). */
  more: boolean;
}

/**
 * One queueing pass over at most `batch` entries of the change log: for every active endpoint
 * whose position is before them, its wanted changes become waiting events (the latest per name),
 * and its position moves to the last entry looked at. Expired claims are given back first (to
 * `waiting`, or dropped when a newer change of the name is waiting already). One process at a
 * time: a pass that finds the lock taken does nothing. The endpoints whose events it may write
 * (the active ones, and those with expired claims) are locked first, in id order, and the pass
 * writes only theirs (an endpoint enabled meanwhile waits for the next pass).
 */
export async function queueEvents(db: Database, batch: number): Promise<QueuePass | undefined> {
  return db.transaction(async (tx) => {
    const [lock] = await rows<{ locked: boolean }>(tx, sql`select pg_try_advisory_xact_lock(${QUEUE_LOCK}) as locked`);
    if (lock?.locked !== true) return undefined;
    const locked = await rows<{ id: string }>(
      tx,
      sql`
        select ep.id from webhook_endpoints as ep
        where ep.status = 'active' or exists (select 1 from webhook_events s
          where s.endpoint_id = ep.id and s.status = 'sending' and s.claimed_until < now())
        order by ep.id
        for no key update`,
    );
    if (locked.length === 0) return { queued: 0, more: false };
    const mine = sql`${textArrayLiteral(locked.map((row) => row.id))}::text[]`;
    await tx.execute(sql`
      delete from webhook_events s
      where s.status = 'sending' and s.claimed_until < now() and s.endpoint_id = any(${mine}) and exists (
        select 1 from webhook_events w where w.endpoint_id = s.endpoint_id and w.name = s.name and w.status = 'waiting')`);
    await tx.execute(sql`
      update webhook_events set status = 'waiting', claimed_until = null, claim = null
      where status = 'sending' and claimed_until < now() and endpoint_id = any(${mine})`);
    const [row] = await rows<{ queued: number; scanned: number }>(
      tx,
      sql`
        with start as (
          select fed_commit_seq as commit_seq, fed_seq as seq from webhook_endpoints
          where status = 'active' and id = any(${mine}) order by fed_commit_seq, fed_seq limit 1
        ),
        batch as (
          select c.commit_seq, e.seq, e.kind, e.name, c.committed_at
          from start, change_log_commits as c
          cross join lateral (
            select seq, kind, name from change_log as e
            where e.xid = c.xid and (c.commit_seq > start.commit_seq or e.seq > start.seq)
            order by e.seq limit ${batch}
          ) as e
          where c.commit_seq >= start.commit_seq
          order by c.commit_seq, e.seq
          limit ${batch}
        ),
        last as (select commit_seq, seq from batch order by commit_seq desc, seq desc limit 1),
        matched as (
          select distinct on (ep.id, b.name) ep.id as endpoint_id, b.name, b.kind, b.commit_seq, b.seq, b.committed_at
          from batch as b
          join webhook_endpoints as ep on ep.status = 'active' and ep.id = any(${mine})
            and (b.commit_seq, b.seq) > (ep.fed_commit_seq, ep.fed_seq)
            and (ep.events & (1 << (b.kind - 1))) <> 0
            and (not exists (select 1 from webhook_filters f where f.endpoint_id = ep.id)
              or exists (select 1 from webhook_filters f where f.endpoint_id = ep.id
                and (f.name = b.name or f.namespace = split_part(b.name, '@', 2))))
          order by ep.id, b.name, b.commit_seq desc, b.seq desc
        ),
        queued as (
          insert into webhook_events (id, endpoint_id, name, kind, commit_seq, seq, committed_at)
          select 'msg_' || replace(gen_random_uuid()::text, '-', ''), endpoint_id, name, kind, commit_seq, seq, committed_at
          from matched
          on conflict (endpoint_id, name) where status = 'waiting' do update set
            id = excluded.id, kind = excluded.kind, commit_seq = excluded.commit_seq, seq = excluded.seq,
            committed_at = excluded.committed_at, attempt = 0,
            next_attempt_at = greatest(webhook_events.next_attempt_at, excluded.next_attempt_at)
          returning 1
        ),
        moved as (
          update webhook_endpoints as ep set fed_commit_seq = last.commit_seq, fed_seq = last.seq
          from last
          where ep.status = 'active' and ep.id = any(${mine}) and (ep.fed_commit_seq, ep.fed_seq) < (last.commit_seq, last.seq)
          returning 1
        )
        select (select count(*)::int from queued) as queued, (select count(*)::int from batch) as scanned,
               (select count(*)::int from moved) as moved`,
    );
    return { queued: row?.queued ?? 0, more: (row?.scanned ?? 0) >= batch };
  });
}

/** An event claimed for delivery, with what delivering it needs of its endpoint. */
export interface ClaimedEvent {
  id: string;
  endpointId: string;
  url: string;
  name: string;
  kind: number;
  position: LogPosition;
  committedAt: Date;
  attempt: number;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
}

/**
 * Claims due events for `ttlMs` under `token`: at most `limit`, at most `concurrency` in flight
 * per endpoint (counting every process's unexpired claims), never a second of the same endpoint
 * and name while one is being delivered, never for a disabled endpoint or a revoked key's.
 *
 * Nor an event whose name changed again after the endpoint's position (a change not queued
 * yet): a delivery sends the profile as it is now, so that event would send the newer state, and
 * the newer change, queued next as an event of its own, would send it a second time. This is
 * what an endpoint enabled again meets (its position stopped while it was disabled, its kept
 * events did not: a pass that queued before the enable and claims after it), and what a change
 * committed between a pass's queueing and its claim meets. The next queueing pass replaces the
 * event with the newer change, or moves the position past a change the endpoint does not want.
 */
export async function claimEvents(
  db: Database,
  token: string,
  limit: number,
  concurrency: number,
  ttlMs: number,
): Promise<ClaimedEvent[]> {
  if (limit <= 0) return [];
  // The endpoints are locked by one statement and their slots counted by the next: a statement's
  // snapshot is taken when it starts, so one that counted under a lock it waited for (another
  // process's claim committing meanwhile) would count that claim's events as free slots.
  const claimed = await db.transaction(async (tx) => {
    const locked = await rows<{ id: string }>(
      tx,
      sql`
        select ep.id from webhook_endpoints as ep
        where ep.status = 'active'
          and exists (select 1 from api_keys k where k.id = ep.api_key_id and k.revoked_at is null)
          and exists (select 1 from webhook_events w
            where w.endpoint_id = ep.id and w.status = 'waiting' and w.next_attempt_at <= now())
        order by ep.id
        for update skip locked`,
    );
    if (locked.length === 0) return [];
    const mine = sql`${textArrayLiteral(locked.map((row) => row.id))}::text[]`;
    return rows<{
      id: string;
      endpoint_id: string;
      url: string;
      name: string;
      kind: number;
      commit_seq: string | number;
      seq: string | number;
      committed_at: string | Date;
      attempt: number;
      secret: string;
      previous_secret: string | null;
      previous_secret_until: string | Date | null;
    }>(
      tx,
      sql`
        with slots as (
          select ep.id, ep.url, ep.secret, ep.previous_secret, ep.previous_secret_until, ep.fed_commit_seq, ep.fed_seq,
            ${concurrency} - (select count(*) from webhook_events s
              where s.endpoint_id = ep.id and s.status = 'sending' and s.claimed_until > now()) as free
          from webhook_endpoints as ep
          where ep.id = any(${mine})
        ),
        candidates as (
          select w.id, row_number() over (partition by slots.id order by w.next_attempt_at, w.commit_seq, w.seq) as rank
          from slots cross join lateral (
            select w.id, w.next_attempt_at, w.commit_seq, w.seq from webhook_events as w
            where w.endpoint_id = slots.id and w.status = 'waiting' and w.next_attempt_at <= now()
              and not exists (select 1 from webhook_events s
                where s.endpoint_id = w.endpoint_id and s.name = w.name and s.status = 'sending')
              and not exists (select 1 from change_log as e join change_log_commits as c on c.xid = e.xid
                where e.name = w.name and (c.commit_seq, e.seq) > (slots.fed_commit_seq, slots.fed_seq))
            order by w.next_attempt_at, w.commit_seq, w.seq
            limit greatest(slots.free, 0)
          ) as w
        ),
        chosen as (
          select id from candidates order by rank limit ${limit}
        )
        update webhook_events as w
        set status = 'sending', attempt = w.attempt + 1, claim = ${token},
          claimed_until = now() + ${ttlMs} * interval '1 millisecond'
        from chosen, slots
        where w.id = chosen.id and slots.id = w.endpoint_id and w.status = 'waiting'
        returning w.id, w.endpoint_id, slots.url, w.name, w.kind, w.commit_seq, w.seq, w.committed_at, w.attempt,
          slots.secret, slots.previous_secret, slots.previous_secret_until`,
    );
  });
  return claimed.map((row) => ({
    id: row.id,
    endpointId: row.endpoint_id,
    url: row.url,
    name: row.name,
    kind: Number(row.kind),
    position: { commitSeq: Number(row.commit_seq), seq: Number(row.seq) },
    committedAt: date(row.committed_at) ?? new Date(0),
    attempt: Number(row.attempt),
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: date(row.previous_secret_until),
  }));
}

/** One attempt as the deliveries log keeps it. */
export interface Attempt {
  status: number | null;
  durationMs: number;
  error: string | null;
  nextAttemptAt: Date | null;
}

const attemptRow = (event: ClaimedEvent, attempt: Attempt) => sql`
    insert into webhook_deliveries (endpoint_id, event_id, kind, name, attempt, status, duration_ms, error, next_attempt_at)
    values (${event.endpointId}, ${event.id}, ${event.kind}, ${event.name}, ${event.attempt}, ${attempt.status},
            ${attempt.durationMs}, ${attempt.error},
            ${attempt.nextAttemptAt === null ? null : attempt.nextAttemptAt.toISOString()}::timestamptz)`;

async function logAttempt(db: Database, event: ClaimedEvent, attempt: Attempt): Promise<void> {
  await db.execute(attemptRow(event, attempt));
}

/**
 * The event was delivered: it goes, its endpoint is no longer failing. The endpoint's row is
 * locked (and written) only when it was failing: a failure settled meanwhile by another delivery
 * keeps its streak, as it came later.
 */
export async function settleDelivered(
  db: Database,
  event: ClaimedEvent,
  token: string,
  attempt: Attempt,
): Promise<void> {
  if (!(await endpointFailing(db, event.endpointId, false))) {
    // The event and its attempt in one statement, so its own transaction.
    await db.execute(sql`
      with gone as (delete from webhook_events where id = ${event.id} and claim = ${token})
      ${attemptRow(event, attempt)}`);
    return;
  }
  await db.transaction(async (tx) => {
    const failing = await endpointFailing(tx, event.endpointId, true);
    await tx.execute(sql`delete from webhook_events where id = ${event.id} and claim = ${token}`);
    if (failing)
      await tx.execute(sql`update webhook_endpoints set failing_since = null where id = ${event.endpointId}`);
    await logAttempt(tx, event, attempt);
  });
}

export interface FailedSettlement {
  /** When to try again; null: the schedule is over, the event has failed. */
  retryAt: Date | null;
  /** Disable the endpoint at once, with this reason (a 410). */
  disable: string | null;
  /** Disable it when its deliveries have all failed since longer than this. */
  disableAfterMs: number;
}

/**
 * The delivery failed: the event waits for its retry (a newer change of the name waiting already
 * takes its place, and waits at least as long), or goes when the schedule is over; the endpoint
 * is failing since its first failure in a row, and disabled past `disableAfterMs` of them or at
 * once when asked. Returns whether the endpoint was disabled.
 */
export async function settleFailed(
  db: Database,
  event: ClaimedEvent,
  token: string,
  attempt: Attempt,
  settlement: FailedSettlement,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    // The endpoint's row first (the lock order): this update locks it.
    const [failing] = await rows<{ since: string | Date }>(
      tx,
      sql`
        update webhook_endpoints set failing_since = coalesce(failing_since, now())
        where id = ${event.endpointId} returning failing_since as since`,
    );
    const { retryAt } = settlement;
    // A disabled endpoint keeps the event for when it is enabled again.
    const keep = retryAt ?? (settlement.disable === null ? null : new Date());
    if (keep === null) {
      await tx.execute(sql`delete from webhook_events where id = ${event.id} and claim = ${token}`);
    } else {
      const newer = await rows<{ id: string }>(
        tx,
        sql`
          update webhook_events set next_attempt_at = greatest(next_attempt_at, ${keep.toISOString()}::timestamptz)
          where endpoint_id = ${event.endpointId} and name = ${event.name} and status = 'waiting'
          returning id`,
      );
      if (newer.length > 0) {
        await tx.execute(sql`delete from webhook_events where id = ${event.id} and claim = ${token}`);
      } else {
        await tx.execute(sql`
          update webhook_events set status = 'waiting', next_attempt_at = ${keep.toISOString()}::timestamptz,
            claimed_until = null, claim = null
          where id = ${event.id} and claim = ${token}`);
      }
    }
    const since = date(failing?.since ?? null);
    const tooLong = since !== null && Date.now() - since.getTime() >= settlement.disableAfterMs;
    const reason =
      settlement.disable ??
      (tooLong ? `every delivery failed for ${Math.round(settlement.disableAfterMs / 1000)} s` : null);
    if (reason !== null) {
      await tx.execute(sql`
        update webhook_endpoints set status = 'disabled', disabled_reason = ${reason}
        where id = ${event.endpointId} and status = 'active'`);
    }
    await logAttempt(tx, event, attempt);
    return reason !== null;
  });
}

/**
 * Gives a claimed event back undelivered (its process stops): it waits again at once, the attempt
 * not counted, unless a newer change of its name waits already.
 */
export async function releaseClaim(db: Database, event: ClaimedEvent, token: string): Promise<void> {
  await db.transaction(async (tx) => {
    const [newer] = await rows<{ id: string }>(
      tx,
      sql`select id from webhook_events where endpoint_id = ${event.endpointId} and name = ${event.name} and status = 'waiting'`,
    );
    if (newer !== undefined) {
      await tx.execute(sql`delete from webhook_events where id = ${event.id} and claim = ${token}`);
      return;
    }
    await tx.execute(sql`
      update webhook_events set status = 'waiting', claimed_until = null, claim = null, attempt = greatest(attempt - 1, 0)
      where id = ${event.id} and claim = ${token}`);
  });
}

/** Whether any endpoint is active: without one, the dispatcher has nothing to do. */
export async function anyActiveEndpoint(db: Database): Promise<boolean> {
  const [row] = await rows<{ any: boolean }>(
    db,
    sql`select exists (select 1 from webhook_endpoints where status = 'active') as any`,
  );
  return row?.any === true;
}

/** Events waiting or being delivered, for /metrics. */
export async function waitingEvents(db: Database): Promise<number> {
  const [row] = await rows<{ count: number }>(db, sql`select count(*)::int as count from webhook_events`);
  return row?.count ?? 0;
}

/** The soonest time a waiting event of an active endpoint is due; undefined when none waits. */
export async function nextDue(db: Database): Promise<Date | undefined> {
  const [row] = await rows<{ due: string | Date | null }>(
    db,
    sql`
      select min(w.next_attempt_at) as due from webhook_events w
      join webhook_endpoints ep on ep.id = w.endpoint_id and ep.status = 'active'
      where w.status = 'waiting'`,
  );
  return date(row?.due ?? null) ?? undefined;
}

/** Keeps the latest `keep` attempts of each endpoint in its deliveries log. */
export async function pruneDeliveries(db: Database, keep: number): Promise<void> {
  await db.execute(sql`
    delete from webhook_deliveries d using (
      select id from (
        select id, row_number() over (partition by endpoint_id order by id desc) as rank from webhook_deliveries
      ) as ranked where rank > ${keep}
    ) as old
    where d.id = old.id`);
}
