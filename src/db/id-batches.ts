/**
 * Work over a table in batches of rows in id order, each batch its own statements: what the
 * backfills after the migrations do (./skeleton-backfill.ts, ./records-text.ts), so readers never
 * wait and an interrupted run goes on from the start next time.
 */

/** Reads batches with `read(after)` (rows with a greater id, in id order) and writes each; returns the rows written. */
export async function inIdBatches<Row extends { id: number }>(
  read: (after: number) => Promise<Row[]>,
  write: (rows: Row[]) => Promise<void>,
): Promise<number> {
  let written = 0;
  let after = 0;
  for (;;) {
    const rows = await read(after);
    const last = rows.at(-1);
    if (last === undefined) return written;
    await write(rows);
    written += rows.length;
    after = last.id;
  }
}
