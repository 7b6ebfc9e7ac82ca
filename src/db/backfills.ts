/**
 * What runs right after the migrations, wherever they run (every start of the server and of the
 * data commands, `npm run db:migrate`): the backfills of derived columns that a migration adds
 * but cannot, or should not in one statement, fill for the rows that exist.
 */
import { backfillRecordsText } from './records-text.js';
import type { Database } from './schema.js';
import { backfillSkeletons } from './skeleton-backfill.js';

export async function backfillDerivedColumns(db: Database): Promise<void> {
  await backfillSkeletons(db);
  await backfillRecordsText(db);
}
