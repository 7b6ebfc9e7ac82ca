/**
 * Global set-up of every project: the PGlite templates that suites copy (./pglite-templates.ts).
 */
import type { TestProject } from 'vitest/node';
import { buildPgliteTemplates } from './pglite-templates.js';

export default async function providePgliteTemplates(project: TestProject): Promise<() => void> {
  const { folders, remove } = await buildPgliteTemplates();
  project.provide('pgliteTemplates', folders);
  return remove;
}
