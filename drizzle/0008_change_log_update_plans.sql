/*
 * The update trigger of the change log (0006) joins a statement's old rows to its new ones. A
 * static statement in PL/pgSQL is planned once per session and its plan kept, sized for the
 * transition tables of its first run: after a statement that changed one profile, or none (an
 * import's first batch of unchanged lines fires the trigger with empty tables), the session joined
 * every later statement's rows in a nested loop, in time growing with the square of their number.
 * EXECUTE plans the statement at each run, for the rows it has (bench/README.md, "Change log").
 */
CREATE OR REPLACE FUNCTION change_log_profiles_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written bigint;
BEGIN
  -- Only a new content hash changes the public answer (a new creator e-mail does not).
  EXECUTE $statement$
    INSERT INTO change_log (xid, seq, kind, name)
      SELECT pg_current_xact_id()::text::bigint, nextval('change_log_seq'), 2, n.name
        FROM new_profiles AS n JOIN old_profiles AS o ON o.id = n.id
       WHERE o.content_hash IS DISTINCT FROM n.content_hash OR o.name IS DISTINCT FROM n.name
  $statement$;
  -- EXECUTE leaves FOUND as it was.
  GET DIAGNOSTICS written = ROW_COUNT;
  IF written > 0 THEN
    PERFORM change_log_note_transaction();
  END IF;
  RETURN NULL;
END
$$;
