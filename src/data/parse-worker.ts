/**
 * A worker thread of the importer: prepares batches (import-batch.ts) for the main thread, which
 * writes them. See batch-preparer.ts.
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { prepareBatch } from './import-batch.js';

export interface BatchRequest {
  id: number;
  bytes: Uint8Array;
  firstLine: number;
}

// Below the service's own processes: on a machine that also serves lookups, their readers go
// first, and the import takes the CPU they leave. On Linux this applies to this thread only.
try {
  os.setPriority(Number(workerData.niceness ?? 0));
} catch {
  // Not permitted here (or no such notion): run at the normal priority.
}

/** Set to 1 by the main thread once a line has failed: the columns are not needed any more. */
const rejected = new Int32Array(workerData.rejected as SharedArrayBuffer);

parentPort?.on('message', ({ id, bytes, firstLine }: BatchRequest) => {
  parentPort?.postMessage({ id, batch: prepareBatch(bytes, firstLine, Atomics.load(rejected, 0) === 0) });
});
