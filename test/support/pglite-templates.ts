/**
 * PGlite folders made once per test run and copied for each suite. A new PGlite folder runs
 * PostgreSQL's initdb inside WebAssembly (and most suites then load the demo data): several times
 * the CPU of copying a folder that already holds the result. The global set-up
 * builds them with the code under test, so a copy is exactly what a fresh folder would be; see
 * docs/testing.md, "Test run time".
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';

/** `empty`: a new database, before any migration; `demo`: migrated and holding the demo data. */
export type PgliteTemplate = 'empty' | 'demo';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Folders of the templates, by name; absent when the set-up did not run. */
    pgliteTemplates: Partial<Record<PgliteTemplate, string>>;
  }
}

/** A new folder holding a copy of `template`, or undefined when no template was made. */
export function copyOfTemplate(template: PgliteTemplate): string | undefined {
  let templates: Partial<Record<PgliteTemplate, string>> | undefined;
  try {
    templates = inject('pgliteTemplates');
  } catch {
    return undefined; // outside a vitest project with the set-up
  }
  const source = templates?.[template];
  if (source === undefined || !existsSync(source)) return undefined;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nps-pglite-'));
  cpSync(source, dataDir, { recursive: true });
  return dataDir;
}

/**
 * Builds the templates (once per run: every project of the run calls this in the same process)
 * and returns their folders with a function that removes them.
 */
export async function buildPgliteTemplates(): Promise<{ folders: Record<PgliteTemplate, string>; remove(): void }> {
  const root = path.join(os.tmpdir(), `nps-pglite-templates-${process.pid}`);
  const folders = { empty: path.join(root, 'empty'), demo: path.join(root, 'demo') };
  if (!existsSync(folders.demo)) {
    mkdirSync(root, { recursive: true });
    const { openDatabase } = await import('../../src/db/database.js');
    const { seedDemoData } = await import('../../src/data/seed.js');
    for (const name of ['empty', 'demo'] as const) {
      const building = mkdtempSync(path.join(root, `${name}-`));
      // The demo database starts as a copy of the new one: one initdb per run, not two.
      if (name === 'demo') cpSync(folders.empty, building, { recursive: true });
      const handle = await openDatabase({ url: undefined, dataDir: building });
      if (name === 'demo') {
        await handle.migrate();
        await seedDemoData(handle.db);
      }
      await handle.close();
      renameSync(building, folders[name]);
    }
  }
  return { folders, remove: () => rmSync(root, { recursive: true, force: true }) };
}
