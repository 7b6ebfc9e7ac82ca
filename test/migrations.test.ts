/**
 * The committed migrations under drizzle/ are in step with src/db/schema.ts: drizzle-kit, asked
 * to generate a migration from the schema against a copy of them, finds nothing to add. A schema
 * change without `npm run db:generate` fails here. And the journal is one Drizzle's migrator can
 * follow: it applies only migrations created after the last one a database holds, so a migration
 * whose `when` is older than an earlier entry's (two branches' migrations, renumbered on merge)
 * would be skipped without a word on every database already past it.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('migrations', () => {
  it('hold every change of src/db/schema.ts (run `npm run db:generate` after changing it)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nps-migrations-'));
    try {
      const out = path.join(dir, 'drizzle');
      cpSync(path.join(ROOT, 'drizzle'), out, { recursive: true });
      const config = path.join(dir, 'drizzle.config.mjs');
      writeFileSync(
        config,
        // drizzle-kit takes these paths relative to its working directory.
        `export default ${JSON.stringify({ dialect: 'postgresql', schema: './src/db/schema.ts', out: path.relative(ROOT, out) })};\n`,
      );
      const before = readdirSync(out).sort();
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        [path.join(ROOT, 'node_modules/drizzle-kit/bin.cjs'), 'generate', `--config=${config}`],
        { cwd: ROOT },
      );
      expect(`${stdout}${stderr}`).toContain('No schema changes');
      expect(readdirSync(out).sort()).toEqual(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are journaled in order: numbered from 0, each created after the one before, each with its file', () => {
    const folder = path.join(ROOT, 'drizzle');
    const journal = JSON.parse(readFileSync(path.join(folder, 'meta/_journal.json'), 'utf8')) as {
      entries: Array<{ idx: number; when: number; tag: string }>;
    };
    const { entries } = journal;
    expect(entries.map((entry) => entry.idx)).toEqual(entries.map((_, index) => index));
    for (const [index, entry] of entries.entries()) {
      expect(entry.tag.startsWith(String(index).padStart(4, '0')), entry.tag).toBe(true);
      const before = entries[index - 1];
      if (before !== undefined) {
        // Drizzle's migrator would skip this one on a database that holds the one before it.
        expect(entry.when, `${entry.tag} is dated before ${before.tag}`).toBeGreaterThan(before.when);
      }
    }
    const files = readdirSync(folder).filter((file) => file.endsWith('.sql'));
    expect(files.sort()).toEqual(entries.map((entry) => `${entry.tag}.sql`).sort());
  });
});
