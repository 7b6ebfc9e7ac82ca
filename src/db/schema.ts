/**
 * The Drizzle schema: the single source of truth for the tables. `npm run db:generate` turns a
 * change here into a migration under drizzle/, which the server applies at start.
 *
 * References (profiles.namespace -> namespaces.name, records.profile_id -> profiles.id) are not
 * foreign-key constraints but statement-level triggers with the same guarantee, written by hand
 * in migration 0001 (drizzle-kit does not model triggers): a foreign key checks each inserted row
 * with a query of its own, which was much of the database's work in a large import; the triggers
 * check a whole statement's rows with one join. See drizzle/0002_set_based_references.sql and
 * docs/decisions.md, "References checked per statement, and bulk mode".
 *
 * Private data: `namespaces.owner_email` and `profiles.creator_email` are never selected by the
 * read paths of the API, only compared inside the owner-check query.
 */

import type { RecordValue } from '../profiles/record-value.js';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  json,
  type PgDatabase,
  type PgQueryResultHKT,
  pgTable,
  primaryKey,
  smallint,
  sql,
  text,
  timestamp,
  uniqueIndex,
} from './drizzle.js';

export type { RecordValue };

/** A top-level name (the part after `@`) and the private e-mail of its owner. */
export const namespaces = pgTable('namespaces', {
  /** Canonical top-level name (NFC, lower case). */
  name: text('name').primaryKey(),
  ownerEmail: text('owner_email').notNull(),
});

export const profiles = pgTable(
  'profiles',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** Canonical name ID (NFC, lower case). */
    name: text('name').notNull().unique('profiles_name_unique'),
    localPart: text('local_part').notNull(),
    /** Names a namespace; checked, and cascaded on delete, by triggers (see above). */
    namespace: text('namespace').notNull(),
    description: text('description').notNull().default(''),
    image: text('image').notNull().default(''),
    level: integer('level').notNull().default(0),
    creatorEmail: text('creator_email').notNull(),
    /**
     * Hash of the public content (name, description, image, level, records). It changes exactly
     * when the public profile changes, so it serves as the strong ETag; it holds no private data.
     */
    contentHash: text('content_hash').notNull(),
    /**
     * UTS #39 skeleton of the local part (src/names/skeleton.ts), for the name check's look-alikes
     * of existing names. Written by the importer with the profile; null until computed for rows
     * that other writers added, which the backfill at migration (src/db/skeleton-backfill.ts)
     * fills. Derived data, not part of the public profile or its content hash.
     */
    localSkeleton: text('local_skeleton'),
    /**
     * The contract's `records` object as JSON text, exactly as src/db/records-text.ts builds it
     * from `records` (keys ascending, values as stored): written by the importer with the profile,
     * so a lookup reads one column instead of aggregating the records (docs/decisions.md, "The
     * records text stored with the profile"). Null for rows of other writers and of before migration 0005: lookups then
     * build it from `records`, and the backfill after the migrations (src/db/records-text.ts, run
     * by src/db/backfills.ts) fills it. Derived data, covered by the content hash through the
     * records.
     */
    recordsJson: text('records_json'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Prefix search (src/db/discovery-queries.ts) reads names in code-point order ("C"), whatever
    // the database's default collation: one index for all namespaces, one within a namespace
    // (which also serves the namespace foreign key).
    index('profiles_name_c_idx').on(sql`${t.name} collate "C"`),
    index('profiles_namespace_name_c_idx').on(t.namespace, sql`${t.name} collate "C"`),
    // The look-alikes of a name (src/db/look-alike-queries.ts). Without the name: the few names
    // that share a skeleton are sorted after the index lookup, and the index costs an import less.
    index('profiles_namespace_skeleton_idx').on(t.namespace, t.localSkeleton),
    // Rows still without a skeleton, for the backfill: empty once it has run, so finding that
    // there is nothing to do costs nothing at each start.
    index('profiles_missing_skeleton_idx').on(t.id).where(sql`${t.localSkeleton} is null`),
    // Rows still without their records text, for its backfill: as the skeletons' index above.
    index('profiles_missing_records_json_idx').on(t.id).where(sql`${t.recordsJson} is null`),
    check('profiles_level_non_negative', sql`${t.level} >= 0`),
    check('profiles_name_parts', sql`${t.name} = ${t.localPart} || '@' || ${t.namespace}`),
  ],
);

/** User-defined records of a profile, keyed by a numeric key unique within the profile. */
export const records = pgTable(
  'records',
  {
    /** Names a profile; checked, and cascaded on delete, by triggers (see above). */
    profileId: bigint('profile_id', { mode: 'number' }).notNull(),
    key: integer('key').notNull(),
    type: text('type').notNull(),
    /**
     * `json`, not `jsonb`: jsonb re-orders object keys, and the API answers map entries in the
     * order the operator gave them.
     */
    value: json('value').$type<RecordValue>().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.profileId, t.key], name: 'records_pkey' }),
    check('records_key_non_negative', sql`${t.key} >= 0`),
    check('records_type_not_empty', sql`length(${t.type}) > 0`),
    check('records_value_shape', sql`json_typeof(${t.value}) in ('string', 'object')`),
  ],
);

/**
 * The reverse lookup's index of wallet addresses: one row per entry of a `crypto` record, kept
 * up to date by triggers on `records` (drizzle/0001_discovery.sql) in the transaction of
 * every write, whichever program writes. Derived data: never written by the application.
 */
export const walletAddresses = pgTable(
  'wallet_addresses',
  {
    /** The address as matched: ASCII lower case for `0x` (EVM) addresses, else as stored. */
    addressKey: text('address_key').notNull(),
    /** Canonical name ID of the profile, so that one index scan answers a page in name order. */
    name: text('name').notNull(),
    profileId: bigint('profile_id', { mode: 'number' }).notNull(),
    recordKey: integer('record_key').notNull(),
    /** The entry's key in the record, e.g. `eth`. */
    symbol: text('symbol').notNull(),
  },
  (t) => [
    index('wallet_addresses_lookup_idx').on(t.addressKey, sql`${t.name} collate "C"`),
    index('wallet_addresses_record_idx').on(t.profileId, t.recordKey),
  ],
);

/**
 * API keys of third-party apps (src/service/api-keys.ts). Only the SHA-256 of a key is stored: a
 * key is 40 random base62 characters (about 238 bits), which no one can find from its hash by
 * trying, so a slow password hash would add cost to every keyed request and no protection.
 * Limits are per minute; null means the configured default (API_KEY_PROFILE_LIMIT,
 * API_KEY_OWNER_CHECK_LIMIT) at the time of the request.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    /** Public id (`key_` and 12 base62 characters): what logs, metrics and `keys list` show. */
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** Lower-case hex SHA-256 of the whole key. */
    keyHash: text('key_hash').notNull().unique('api_keys_key_hash_unique'),
    profileLimit: integer('profile_limit'),
    ownerCheckLimit: integer('owner_check_limit'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Written in batches by the servers (about once a minute), not per request. */
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    /** The key may run only persisted documents (trusted documents, docs/api-keys.md). */
    documentsOnly: boolean('documents_only').notNull().default(false),
  },
  (t) => [
    check('api_keys_profile_limit_positive', sql`${t.profileLimit} > 0`),
    check('api_keys_owner_check_limit_positive', sql`${t.ownerCheckLimit} > 0`),
  ],
);

/**
 * The change log (src/db/change-log.ts, docs/live-updates.md): one entry per change of a profile's
 * public answer, written by triggers on `profiles` in the transaction of the change, whichever
 * program writes (drizzle/0006_change_log.sql): `created` for an inserted profile, `updated` for
 * one whose content hash changed, `removed` for a deleted one. Derived data: never written by the
 * application.
 *
 * Entries are ordered by their transaction's commit (`change_log_commits.commit_seq`), then by
 * `seq` within it. `xid` is the writing transaction (pg_current_xact_id()).
 */
export const changeLog = pgTable(
  'change_log',
  {
    xid: bigint('xid', { mode: 'number' }).notNull(),
    /** From the sequence change_log_seq: increasing within a transaction. */
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** 1 created, 2 updated, 3 removed (CHANGE_KINDS in src/db/change-log.ts). */
    kind: smallint('kind').notNull(),
    /** Canonical name ID. */
    name: text('name').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.xid, t.seq], name: 'change_log_pkey' }),
    // A name's latest change (a stream resumed with Last-Event-ID, the feed filtered by names).
    index('change_log_name_idx').on(t.name),
    check('change_log_kind_known', sql`${t.kind} between 1 and 3`),
  ],
);

/**
 * One row per transaction that wrote change-log entries. `commit_seq` and `committed_at` are set
 * by a deferred trigger at the transaction's commit, under a transaction-level advisory lock held
 * until the commit is visible: commit_seq increases in commit order, so a reader that has seen
 * commit N has seen every commit before it (src/db/change-log.ts says why that is enough).
 */
export const changeLogCommits = pgTable('change_log_commits', {
  xid: bigint('xid', { mode: 'number' }).primaryKey(),
  commitSeq: bigint('commit_seq', { mode: 'number' }).unique('change_log_commits_commit_seq_unique'),
  committedAt: timestamp('committed_at', { withTimezone: true }),
});

/**
 * How far the change log has been pruned (one row): the position of the last entry removed, so
 * that a cursor before it gets 410 (its entries are gone) and one at or after it does not.
 */
export const changeLogPruned = pgTable(
  'change_log_pruned',
  {
    only: boolean('only').primaryKey().default(true),
    commitSeq: bigint('commit_seq', { mode: 'number' }).notNull().default(0),
    seq: bigint('seq', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('change_log_pruned_one_row', sql`${t.only}`)],
);

/**
 * Webhook endpoints of apps (src/service/webhooks.ts, docs/webhooks.md): where an API key's
 * changes are delivered. `events` is a mask of the change kinds wanted (1 created, 2 updated,
 * 4 removed). The secrets are stored so that the service can sign (src/webhooks/secrets.ts:
 * encrypted when WEBHOOK_SECRET_KEY is set); the previous one signs beside the current one until
 * `previous_secret_until`. `fed_*` is the change-log position up to which the endpoint's events
 * have been queued (src/db/webhook-queries.ts). `failing_since` is when the current run of
 * failed deliveries began (null while the last one succeeded).
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    apiKeyId: text('api_key_id').notNull(),
    url: text('url').notNull(),
    events: smallint('events').notNull(),
    description: text('description'),
    status: text('status').notNull().default('active'),
    disabledReason: text('disabled_reason'),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretUntil: timestamp('previous_secret_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    failingSince: timestamp('failing_since', { withTimezone: true }),
    fedCommitSeq: bigint('fed_commit_seq', { mode: 'number' }).notNull(),
    fedSeq: bigint('fed_seq', { mode: 'number' }).notNull(),
  },
  (t) => [
    index('webhook_endpoints_api_key_idx').on(t.apiKeyId),
    check('webhook_endpoints_status_known', sql`${t.status} in ('active', 'disabled')`),
    check('webhook_endpoints_events_known', sql`${t.events} between 1 and 7`),
  ],
);

/**
 * What an endpoint follows: names and namespaces (one of the two per row). An endpoint without
 * any follows every change.
 */
export const webhookFilters = pgTable(
  'webhook_filters',
  {
    endpointId: text('endpoint_id').notNull(),
    name: text('name'),
    namespace: text('namespace'),
  },
  (t) => [
    index('webhook_filters_endpoint_idx').on(t.endpointId),
    index('webhook_filters_name_idx').on(t.name),
    index('webhook_filters_namespace_idx').on(t.namespace),
    check('webhook_filters_one_target', sql`(${t.name} is null) <> (${t.namespace} is null)`),
  ],
);

/**
 * The webhook outbox: events waiting for delivery (`waiting`) and being delivered (`sending`,
 * claimed by one process until `claimed_until`). At most one waiting event per endpoint and name:
 * a newer change replaces it. The change it reports is at (commit_seq, seq) of the change log.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id').notNull(),
    name: text('name').notNull(),
    kind: smallint('kind').notNull(),
    commitSeq: bigint('commit_seq', { mode: 'number' }).notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    committedAt: timestamp('committed_at', { withTimezone: true }).notNull(),
    status: text('status').notNull().default('waiting'),
    attempt: integer('attempt').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    claimedUntil: timestamp('claimed_until', { withTimezone: true }),
    claim: text('claim'),
  },
  (t) => [
    uniqueIndex('webhook_events_waiting_unique').on(t.endpointId, t.name).where(sql`${t.status} = 'waiting'`),
    index('webhook_events_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'waiting'`),
    index('webhook_events_endpoint_name_idx').on(t.endpointId, t.name),
    // A claim counts an endpoint's events being sent, and takes its next due ones in change
    // order: both read a few rows however many wait.
    index('webhook_events_sending_idx').on(t.endpointId, t.name).where(sql`${t.status} = 'sending'`),
    index('webhook_events_next_due_idx')
      .on(t.endpointId, t.nextAttemptAt, t.commitSeq, t.seq)
      .where(sql`${t.status} = 'waiting'`),
    check('webhook_events_status_known', sql`${t.status} in ('waiting', 'sending')`),
  ],
);

/** Every delivery attempt, for an endpoint's deliveries log (the latest kept; see webhook-queries.ts). */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    endpointId: text('endpoint_id').notNull(),
    eventId: text('event_id').notNull(),
    kind: smallint('kind').notNull(),
    name: text('name').notNull(),
    attempt: integer('attempt').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    status: integer('status'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
  },
  (t) => [index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.id)],
);

export type ProfileRow = typeof profiles.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** Drizzle over this schema: what every query module is given, on PostgreSQL or PGlite. */
export type Database = PgDatabase<PgQueryResultHKT, typeof import('./schema.js')>;

/** One read of the request path, handed the server that answers it (./handle.ts, ./replicas.ts). */
export type Read<T> = (db: Database) => Promise<T>;
