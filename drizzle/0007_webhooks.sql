CREATE TABLE "webhook_deliveries" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "webhook_deliveries_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"endpoint_id" text NOT NULL,
	"event_id" text NOT NULL,
	"kind" smallint NOT NULL,
	"name" text NOT NULL,
	"attempt" integer NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" integer,
	"duration_ms" integer NOT NULL,
	"error" text,
	"next_attempt_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"api_key_id" text NOT NULL,
	"url" text NOT NULL,
	"events" smallint NOT NULL,
	"description" text,
	"status" text DEFAULT 'active' NOT NULL,
	"disabled_reason" text,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"failing_since" timestamp with time zone,
	"fed_commit_seq" bigint NOT NULL,
	"fed_seq" bigint NOT NULL,
	CONSTRAINT "webhook_endpoints_status_known" CHECK ("webhook_endpoints"."status" in ('active', 'disabled')),
	CONSTRAINT "webhook_endpoints_events_known" CHECK ("webhook_endpoints"."events" between 1 and 7)
);
--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"name" text NOT NULL,
	"kind" smallint NOT NULL,
	"commit_seq" bigint NOT NULL,
	"seq" bigint NOT NULL,
	"committed_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'waiting' NOT NULL,
	"attempt" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"claimed_until" timestamp with time zone,
	"claim" text,
	CONSTRAINT "webhook_events_status_known" CHECK ("webhook_events"."status" in ('waiting', 'sending'))
);
--> statement-breakpoint
CREATE TABLE "webhook_filters" (
	"endpoint_id" text NOT NULL,
	"name" text,
	"namespace" text,
	CONSTRAINT "webhook_filters_one_target" CHECK (("webhook_filters"."name" is null) <> ("webhook_filters"."namespace" is null))
);
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","id");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_api_key_idx" ON "webhook_endpoints" USING btree ("api_key_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_events_waiting_unique" ON "webhook_events" USING btree ("endpoint_id","name") WHERE "webhook_events"."status" = 'waiting';--> statement-breakpoint
CREATE INDEX "webhook_events_due_idx" ON "webhook_events" USING btree ("next_attempt_at") WHERE "webhook_events"."status" = 'waiting';--> statement-breakpoint
CREATE INDEX "webhook_events_endpoint_name_idx" ON "webhook_events" USING btree ("endpoint_id","name");--> statement-breakpoint
CREATE INDEX "webhook_filters_endpoint_idx" ON "webhook_filters" USING btree ("endpoint_id");--> statement-breakpoint
CREATE INDEX "webhook_filters_name_idx" ON "webhook_filters" USING btree ("name");--> statement-breakpoint
CREATE INDEX "webhook_filters_namespace_idx" ON "webhook_filters" USING btree ("namespace");