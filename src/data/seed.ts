/**
 * Demo data into a database: on the first start of the embedded database (`seedIfEmpty`) and on
 * request (`npm run db:seed`, `seedDemoData`). It goes through the importer, so the demo set is
 * validated like any file and seeding twice changes nothing.
 */
import type { Database } from '../db/database.js';
import { namespaces, profiles } from '../db/schema.js';
import { demoDataLines } from './demo-data.js';
import { type ImportReport, importLines } from './importer.js';

export async function seedDemoData(db: Database): Promise<ImportReport> {
  const report = await importLines(db, demoDataLines());
  if (!report.ok) {
    // Only a change to demo-data.ts that breaks the format can get here.
    const first = report.problems[0];
    throw new Error(`The demo data is invalid: line ${first?.line}: ${first?.reason}`);
  }
  return report;
}

/**
 * Seeds a database that holds no namespace and no profile yet, and tells whether it did. An
 * operator who has loaded data of their own (or deliberately emptied just the profiles but kept
 * a namespace) never gets demo data mixed in.
 */
export async function seedIfEmpty(handle: { db: Database }): Promise<boolean> {
  const { db } = handle;
  const someNamespace = await db.select({ name: namespaces.name }).from(namespaces).limit(1);
  const someProfile = await db.select({ id: profiles.id }).from(profiles).limit(1);
  if (someNamespace.length > 0 || someProfile.length > 0) return false;
  await seedDemoData(db);
  return true;
}
