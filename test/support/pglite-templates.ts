/**
 * PGlite folders made once per test run and copied for each suite. A new PGlite folder runs
 * PostgreSQL's initdb inside WebAssembly (and most suites then load the demo data): several times
 * the CPU of copying a folder that already holds the result. The global set-up
 * builds them with the code under test, so a copy is exactly what a fresh folder would be; see
 * docs/testing.md, "Test run time".
 *
 * A PGlite folder is about a thousand files (40 MB). Creating them on a disk file system cost
 * about 0.5 s of CPU per copy here, a hundred copies per run; in memory (tmpfs) 0.07 s. So the
 * templates and their copies go to /dev/shm when it is a tmpfs with room to spare, else to the
 * temporary folder.
 */
import {
  accessSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statfsSync,
} from 'node:fs';
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
  // Beside the templates: on the same (fast) file system, and removed with them if left over.
  const dataDir = mkdtempSync(path.join(path.dirname(source), 'copy-'));
  cpSync(source, dataDir, { recursive: true });
  return dataDir;
}

const SHARED_MEMORY = '/dev/shm';
/** statfs(2)'s f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;
/** Room for the templates and the copies open at a time (a few dozen at most), many times over. */
const MIN_FREE_MEMORY_BYTES = 2 * 1024 ** 3;

/** /dev/shm when it is a writable tmpfs with room to spare (not a container's 64 MB one), else the temporary folder. */
function foldersBase(): string {
  try {
    const { type, bavail, bsize } = statfsSync(SHARED_MEMORY);
    accessSync(SHARED_MEMORY, constants.W_OK);
    if (type === TMPFS_MAGIC && bavail * bsize >= MIN_FREE_MEMORY_BYTES) return SHARED_MEMORY;
  } catch {
    // No /dev/shm here.
  }
  return os.tmpdir();
}

/**
 * Builds the templates (once per run: every project of the run calls this in the same process)
 * and returns their folders with a function that removes them.
 */
export async function buildPgliteTemplates(): Promise<{ folders: Record<PgliteTemplate, string>; remove(): void }> {
  const root = path.join(foldersBase(), `nps-pglite-templates-${process.pid}`);
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
