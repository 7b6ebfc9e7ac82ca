/**
 * The committed migrations under drizzle/ are in step with src/db/schema.ts: drizzle-kit, asked
 * to generate a migration from the schema against a copy of them, finds nothing to add. A schema
 * change without `npm run db:generate` fails here.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
});
