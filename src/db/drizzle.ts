/**
 * drizzle-orm, loaded through its CommonJS build. Every module of the service takes Drizzle from
 * here, never from 'drizzle-orm' itself.
 *
 * Why: Node 24's ES module loader, for every file it loads, reads the nearest package.json and
 * copies all of its fields, `exports` included (`getPackageScopeConfig` spreads a lazily parsed
 * object). drizzle-orm's package.json lists hundreds of entry points and its ES build is hundreds
 * of files, so `import 'drizzle-orm/postgres-js'` parsed that JSON hundreds of times: far more
 * garbage and CPU time than the CommonJS build, and a heap V8 keeps afterwards. The CommonJS
 * loader reads the scope once per package. The figures, with their date and how they were taken:
 * docs/decisions.md, "Drizzle through its CommonJS build". Drizzle tells its classes apart by a
 * `Symbol.for` key, not by identity, so a module that still imports the ES build (drizzle-kit, a
 * test) works with objects made here.
 *
 * The driver for the embedded database is not here: src/db/pglite.ts loads it only when the
 * embedded database is opened.
 */
import { createRequire } from 'node:module';

// drizzle-kit loads src/db/schema.ts as CommonJS, where `require` exists and import.meta does not.
const load: NodeJS.Require = typeof require === 'function' ? require : createRequire(import.meta.url);

const core = load('drizzle-orm') as typeof import('drizzle-orm');
const pgCore = load('drizzle-orm/pg-core') as typeof import('drizzle-orm/pg-core');

export const { and, asc, between, eq, gt, inArray, isNull, max, or, sql } = core;
export type { Logger, SQL } from 'drizzle-orm';

export const {
  bigint,
  boolean,
  check,
  index,
  integer,
  json,
  pgSchema,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} = pgCore;
export type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
export type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';

export const { drizzle: drizzlePostgres } = load('drizzle-orm/postgres-js') as typeof import('drizzle-orm/postgres-js');
export const { migrate: migratePostgres } = load(
  'drizzle-orm/postgres-js/migrator',
) as typeof import('drizzle-orm/postgres-js/migrator');
export const { readMigrationFiles } = load('drizzle-orm/migrator') as typeof import('drizzle-orm/migrator');
