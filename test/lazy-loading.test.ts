/**
 * What a service on PostgreSQL never loads: PGlite and its Drizzle driver come in only when the
 * embedded database is opened (src/db/pglite.ts), and Drizzle comes through its CommonJS build
 * (src/db/drizzle.ts says why). Node's module hooks see every `import` and `require` resolved
 * after they are registered, so the database module is imported only then.
 */
import { registerHooks } from 'node:module';
import { describe, expect, it } from 'vitest';

const databaseUrl = process.env.TEST_DATABASE_URL;

/** Every module resolved from now on, as `import <specifier>` or `require <specifier>`. */
function recordResolutions(): { seen: string[]; stop: () => void } {
  const seen: string[] = [];
  const hooks = registerHooks({
    resolve(specifier, context, nextResolve) {
      const how = context.conditions.includes('require') ? 'require' : 'import';
      seen.push(`${how} ${specifier}`);
      return nextResolve(specifier, context);
    },
  });
  return { seen, stop: () => hooks.deregister() };
}

describe.runIf(databaseUrl)('modules loaded on demand', () => {
  it('opens PostgreSQL without loading PGlite, Drizzle through CommonJS; PGlite when the embedded database opens', async () => {
    const resolutions = recordResolutions();
    try {
      const { openDatabase } = await import('../src/db/database.js');
      const postgres = await openDatabase({ url: databaseUrl, dataDir: 'memory://' });
      try {
        await postgres.ping();
      } finally {
        await postgres.close();
      }
      const drizzle = resolutions.seen.filter((entry) => / drizzle-orm/.test(entry));
      expect(drizzle).toContain('require drizzle-orm/postgres-js');
      expect(drizzle.filter((entry) => entry.startsWith('import '))).toEqual([]);
      expect(resolutions.seen.filter((entry) => entry.includes('pglite'))).toEqual([]);

      const embedded = await openDatabase({ url: undefined, dataDir: 'memory://' });
      try {
        await embedded.ping();
      } finally {
        await embedded.close();
      }
      expect(resolutions.seen).toContain('require @electric-sql/pglite');
      expect(resolutions.seen).toContain('require drizzle-orm/pglite');
    } finally {
      resolutions.stop();
    }
  });
});
