CREATE TABLE "change_log" (
	"xid" bigint NOT NULL,
	"seq" bigint NOT NULL,
	"kind" smallint NOT NULL,
	"name" text NOT NULL,
	CONSTRAINT "change_log_pkey" PRIMARY KEY("xid","seq"),
	CONSTRAINT "change_log_kind_known" CHECK ("change_log"."kind" between 1 and 3)
);
--> statement-breakpoint
CREATE TABLE "change_log_commits" (
	"xid" bigint PRIMARY KEY NOT NULL,
	"commit_seq" bigint,
	"committed_at" timestamp with time zone,
	CONSTRAINT "change_log_commits_commit_seq_unique" UNIQUE("commit_seq")
);
--> statement-breakpoint
CREATE TABLE "change_log_pruned" (
	"only" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"commit_seq" bigint DEFAULT 0 NOT NULL,
	"seq" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "change_log_pruned_one_row" CHECK ("change_log_pruned"."only")
);
--> statement-breakpoint
CREATE INDEX "change_log_name_idx" ON "change_log" USING btree ("name");--> statement-breakpoint
INSERT INTO "change_log_pruned" ("only") VALUES (true);
--> statement-breakpoint
/*
 * The change log is written by triggers (by hand: drizzle-kit does not model triggers), so every
 * writer of profiles records its changes, in its own transaction: the importer, its removals and
 * a namespace's cascade, and SQL run by hand. docs/decisions.md, "The change log: written by
 * triggers, ordered at commit", says why it is built this way.
 *
 * Order. Entries get `seq` from change_log_seq as they are written; their transaction gets its
 * place among commits at the commit itself: a deferred constraint trigger takes a
 * transaction-level advisory lock, numbers the transaction from change_log_commit_seq and stamps
 * its time, and the lock is released only after the commit is visible. So commit_seq increases in
 * commit order, and a snapshot that sees commit N sees every commit numbered before it: a reader
 * that follows (commit_seq, seq) never skips an entry, however transactions interleave. A
 * sequence value taken while the transaction runs would not do: a transaction that took an early
 * value and committed late would appear behind a reader that had already passed it.
 */
CREATE SEQUENCE "change_log_seq";
--> statement-breakpoint
CREATE SEQUENCE "change_log_commit_seq";
--> statement-breakpoint
CREATE FUNCTION change_log_note_transaction() RETURNS void LANGUAGE sql AS $$
  -- The first entry of a transaction registers it; the row's insert queues the commit trigger once.
  INSERT INTO change_log_commits (xid) VALUES (pg_current_xact_id()::text::bigint) ON CONFLICT (xid) DO NOTHING
$$;
--> statement-breakpoint
CREATE FUNCTION change_log_profiles_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO change_log (xid, seq, kind, name)
    SELECT pg_current_xact_id()::text::bigint, nextval('change_log_seq'), 1, name FROM new_profiles;
  IF FOUND THEN
    PERFORM change_log_note_transaction();
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION change_log_profiles_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Only a new content hash changes the public answer (a new creator e-mail does not).
  INSERT INTO change_log (xid, seq, kind, name)
    SELECT pg_current_xact_id()::text::bigint, nextval('change_log_seq'), 2, n.name
      FROM new_profiles AS n JOIN old_profiles AS o ON o.id = n.id
     WHERE o.content_hash IS DISTINCT FROM n.content_hash OR o.name IS DISTINCT FROM n.name;
  IF FOUND THEN
    PERFORM change_log_note_transaction();
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION change_log_profiles_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO change_log (xid, seq, kind, name)
    SELECT pg_current_xact_id()::text::bigint, nextval('change_log_seq'), 3, name FROM old_profiles;
  IF FOUND THEN
    PERFORM change_log_note_transaction();
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER change_log_on_insert AFTER INSERT ON profiles
  REFERENCING NEW TABLE AS new_profiles FOR EACH STATEMENT EXECUTE FUNCTION change_log_profiles_inserted();
--> statement-breakpoint
CREATE TRIGGER change_log_on_update AFTER UPDATE ON profiles
  REFERENCING OLD TABLE AS old_profiles NEW TABLE AS new_profiles FOR EACH STATEMENT EXECUTE FUNCTION change_log_profiles_updated();
--> statement-breakpoint
CREATE TRIGGER change_log_on_delete AFTER DELETE ON profiles
  REFERENCING OLD TABLE AS old_profiles FOR EACH STATEMENT EXECUTE FUNCTION change_log_profiles_deleted();
--> statement-breakpoint
CREATE FUNCTION change_log_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Held until the transaction ends, after its commit is visible: see the top of this file. The
  -- two keys are the service's ("nps2") and the change log's.
  PERFORM pg_advisory_xact_lock(1852863282, 1);
  UPDATE change_log_commits SET commit_seq = nextval('change_log_commit_seq'), committed_at = clock_timestamp()
   WHERE xid = NEW.xid;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER change_log_commit AFTER INSERT ON change_log_commits
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION change_log_commit();
