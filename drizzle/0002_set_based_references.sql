ALTER TABLE "profiles" DROP CONSTRAINT "profiles_namespace_namespaces_name_fk";
--> statement-breakpoint
ALTER TABLE "records" DROP CONSTRAINT "records_profile_id_profiles_id_fk";
--> statement-breakpoint
/*
 * The two references, checked per statement instead of per row (written by hand; drizzle-kit
 * does not model triggers). A foreign key runs one query for every inserted row; these triggers
 * see all rows of a statement at once (transition tables) and check them with one join. The
 * guarantee is the foreign keys': every record names an existing profile and every profile an
 * existing namespace; deleting a namespace or a profile deletes what refers to it; the referenced
 * rows are locked FOR KEY SHARE until the writing transaction ends, so a concurrent delete waits
 * for it and then cascades to what it wrote. Errors use the foreign keys' SQLSTATE (23503) and
 * constraint names. Cascades see concurrent writes in READ COMMITTED, the default isolation
 * level (foreign keys also guard deletes under REPEATABLE READ; nothing here deletes profiles).
 */
CREATE FUNCTION records_check_profile() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing bigint;
BEGIN
  -- LATERAL: one index probe per referenced profile, never a scan of all profiles.
  SELECT n.profile_id INTO missing
    FROM (SELECT DISTINCT profile_id FROM new_records) AS n
    LEFT JOIN LATERAL (SELECT p.id FROM profiles AS p WHERE p.id = n.profile_id FOR KEY SHARE OF p) AS p ON true
   WHERE p.id IS NULL
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'insert or update on table "records" violates foreign key constraint "records_profile_id_profiles_id_fk"'
      USING ERRCODE = 'foreign_key_violation', TABLE = 'records', CONSTRAINT = 'records_profile_id_profiles_id_fk',
            DETAIL = format('Key (profile_id)=(%s) is not present in table "profiles".', missing);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER records_check_profile_on_insert AFTER INSERT ON records
  REFERENCING NEW TABLE AS new_records FOR EACH STATEMENT EXECUTE FUNCTION records_check_profile();
--> statement-breakpoint
CREATE TRIGGER records_check_profile_on_update AFTER UPDATE ON records
  REFERENCING NEW TABLE AS new_records FOR EACH STATEMENT EXECUTE FUNCTION records_check_profile();
--> statement-breakpoint
CREATE FUNCTION profiles_check_namespace() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing text;
BEGIN
  SELECT n.namespace INTO missing
    FROM (SELECT DISTINCT namespace FROM new_profiles) AS n
    LEFT JOIN LATERAL (SELECT s.name FROM namespaces AS s WHERE s.name = n.namespace FOR KEY SHARE OF s) AS s ON true
   WHERE s.name IS NULL
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'insert or update on table "profiles" violates foreign key constraint "profiles_namespace_namespaces_name_fk"'
      USING ERRCODE = 'foreign_key_violation', TABLE = 'profiles', CONSTRAINT = 'profiles_namespace_namespaces_name_fk',
            DETAIL = format('Key (namespace)=(%s) is not present in table "namespaces".', missing);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER profiles_check_namespace_on_insert AFTER INSERT ON profiles
  REFERENCING NEW TABLE AS new_profiles FOR EACH STATEMENT EXECUTE FUNCTION profiles_check_namespace();
--> statement-breakpoint
CREATE TRIGGER profiles_check_namespace_on_update AFTER UPDATE ON profiles
  REFERENCING NEW TABLE AS new_profiles FOR EACH STATEMENT EXECUTE FUNCTION profiles_check_namespace();
--> statement-breakpoint
CREATE FUNCTION profiles_delete_records() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM records AS r USING old_profiles AS o WHERE r.profile_id = o.id;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER profiles_delete_records AFTER DELETE ON profiles
  REFERENCING OLD TABLE AS old_profiles FOR EACH STATEMENT EXECUTE FUNCTION profiles_delete_records();
--> statement-breakpoint
CREATE FUNCTION namespaces_delete_profiles() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Their records follow through profiles_delete_records.
  DELETE FROM profiles AS p USING old_namespaces AS o WHERE p.namespace = o.name;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER namespaces_delete_profiles AFTER DELETE ON namespaces
  REFERENCING OLD TABLE AS old_namespaces FOR EACH STATEMENT EXECUTE FUNCTION namespaces_delete_profiles();
--> statement-breakpoint
/*
 * A namespace that has profiles keeps its name. (The foreign key cascaded a rename to
 * profiles.namespace, which the check profiles_name_parts then refused: a profile's name
 * contains its namespace. This refuses it with the reason.)
 */
CREATE FUNCTION namespaces_keep_referenced_names() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  renamed text;
BEGIN
  SELECT o.name INTO renamed
    FROM old_namespaces AS o
   WHERE NOT EXISTS (SELECT 1 FROM new_namespaces AS n WHERE n.name = o.name)
     AND EXISTS (SELECT 1 FROM profiles AS p WHERE p.namespace = o.name)
   LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'update or delete on table "namespaces" violates foreign key constraint "profiles_namespace_namespaces_name_fk" on table "profiles"'
      USING ERRCODE = 'foreign_key_violation', TABLE = 'namespaces', CONSTRAINT = 'profiles_namespace_namespaces_name_fk',
            DETAIL = format('Key (name)=(%s) is still referenced from table "profiles".', renamed);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER namespaces_keep_referenced_names AFTER UPDATE ON namespaces
  REFERENCING OLD TABLE AS old_namespaces NEW TABLE AS new_namespaces
  FOR EACH STATEMENT EXECUTE FUNCTION namespaces_keep_referenced_names();
--> statement-breakpoint
/* TRUNCATE of a referenced table alone, as with foreign keys, is refused: name both tables. */
CREATE FUNCTION refuse_truncate_of_referenced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  referencing text := TG_ARGV[0];
  left_behind boolean;
BEGIN
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I)', referencing) INTO left_behind;
  IF left_behind THEN
    RAISE EXCEPTION 'cannot truncate a table referenced in a foreign key constraint'
      USING ERRCODE = 'feature_not_supported',
            DETAIL = format('Table "%s" references "%s".', referencing, TG_TABLE_NAME),
            HINT = format('Truncate table "%s" at the same time.', referencing);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER profiles_refuse_truncate AFTER TRUNCATE ON profiles
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate_of_referenced('records');
--> statement-breakpoint
CREATE TRIGGER namespaces_refuse_truncate AFTER TRUNCATE ON namespaces
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_truncate_of_referenced('profiles');
