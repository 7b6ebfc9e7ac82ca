CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"profile_limit" integer,
	"owner_check_limit" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "api_keys_profile_limit_positive" CHECK ("api_keys"."profile_limit" > 0),
	CONSTRAINT "api_keys_owner_check_limit_positive" CHECK ("api_keys"."owner_check_limit" > 0)
);
