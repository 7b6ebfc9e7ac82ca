CREATE TABLE "namespaces" (
	"name" text PRIMARY KEY NOT NULL,
	"owner_email" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "profiles" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "profiles_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"local_part" text NOT NULL,
	"namespace" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"image" text DEFAULT '' NOT NULL,
	"level" integer DEFAULT 0 NOT NULL,
	"creator_email" text NOT NULL,
	"content_hash" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "profiles_name_unique" UNIQUE("name"),
	CONSTRAINT "profiles_level_non_negative" CHECK ("profiles"."level" >= 0),
	CONSTRAINT "profiles_name_parts" CHECK ("profiles"."name" = "profiles"."local_part" || '@' || "profiles"."namespace")
);
--> statement-breakpoint
CREATE TABLE "records" (
	"profile_id" bigint NOT NULL,
	"key" integer NOT NULL,
	"type" text NOT NULL,
	"value" json NOT NULL,
	CONSTRAINT "records_pkey" PRIMARY KEY("profile_id","key"),
	CONSTRAINT "records_key_non_negative" CHECK ("records"."key" >= 0),
	CONSTRAINT "records_type_not_empty" CHECK (length("records"."type") > 0),
	CONSTRAINT "records_value_shape" CHECK (json_typeof("records"."value") in ('string', 'object'))
);
--> statement-breakpoint
ALTER TABLE "profiles" ADD CONSTRAINT "profiles_namespace_namespaces_name_fk" FOREIGN KEY ("namespace") REFERENCES "public"."namespaces"("name") ON DELETE cascade ON UPDATE cascade;--> statement-breakpoint
ALTER TABLE "records" ADD CONSTRAINT "records_profile_id_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."profiles"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "profiles_namespace_idx" ON "profiles" USING btree ("namespace");