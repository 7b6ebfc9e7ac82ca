/**
 * Prepares the batches of an import (import-batch.ts) ahead of the writer, in worker threads
 * once the input turns out to be big, and hands them over in input order.
 *
 * Checking and serializing lines is most of the importer's CPU (JSON.parse, validation, name
 * normalization, content hashes, JSON.stringify of the columns); in one thread it, not the
 * database, limited a large import. Workers do it in parallel while the main thread writes.
 * Small inputs (the demo data, most tests) stay on the calling thread: a worker costs a few
 * hundred milliseconds to start.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { ownedBuffer } from '../workers/owned-buffer.js';
import { workerScript } from '../workers/worker-script.js';
import { type PreparedBatch, prepareBatch } from './import-batch.js';
import type { LineBatch } from './line-batches.js';

export interface PreparerOptions {
  /** Worker threads for big inputs; 0 prepares every batch on the calling thread. */
  workers?: number;
  /** Batches prepared on the calling thread before workers start. */
  inlineBatches?: number;
  /**
   * Niceness of the worker threads (Linux: 0 normal, up to 19 lowest). Readers of a serving
   * database (the service and its PostgreSQL backends) then get the CPU first.
   */
  niceness?: number;
}

/** Two cores of PostgreSQL and Node work side by side; more workers than cores only queue. */
const DEFAULT_WORKERS = Math.min(os.availableParallelism(), 4);
const DEFAULT_INLINE_BATCHES = 4;
const DEFAULT_NICENESS = 10;
/** Batches queued per worker, so none waits for the next while the main thread is busy. */
const QUEUED_PER_WORKER = 4;

interface PendingRequest {
  resolve(batch: PreparedBatch): void;
  reject(error: unknown): void;
}

export class BatchPreparer {
  private readonly workerCount: number;
  private readonly inlineBatches: number;
  private readonly niceness: number;
  private readonly workers: Worker[] = [];
  private readonly requests = new Map<number, PendingRequest>();
  /** Shared with the workers: 1 once a line has failed, so they skip serializing columns. */
  private readonly rejected = new Int32Array(new SharedArrayBuffer(4));
  private nextId = 0;
  private closed = false;

  constructor(options: PreparerOptions = {}) {
    this.workerCount = options.workers ?? DEFAULT_WORKERS;
    this.inlineBatches = options.inlineBatches ?? DEFAULT_INLINE_BATCHES;
    this.niceness = options.niceness ?? DEFAULT_NICENESS;
  }

  /** The file has a bad line: nothing will be written, so no batch needs its columns. */
  markRejected(): void {
    Atomics.store(this.rejected, 0, 1);
  }

  /** The prepared batches of `source`, in order, with up to a few per worker in the works. */
  async *prepare(source: AsyncIterable<LineBatch>): AsyncGenerator<PreparedBatch> {
    const iterator = source[Symbol.asyncIterator]();
    const pending: Array<Promise<PreparedBatch>> = [];
    let count = 0;
    let exhausted = false;
    for (;;) {
      while (!exhausted && pending.length < this.ahead(count)) {
        const next = await iterator.next();
        if (next.done) {
          exhausted = true;
          break;
        }
        count += 1;
        const prepared = this.prepareOne(next.value, count);
        // Awaited in turn below; until then a failure must not count as unhandled.
        prepared.catch(() => {});
        pending.push(prepared);
      }
      const head = pending.shift();
      if (head === undefined) return;
      yield await head;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((worker) => worker.terminate()));
    for (const request of this.requests.values()) request.reject(new Error('the import stopped'));
    this.requests.clear();
  }

  /** How many batches to have in the works: one at a time inline, a few per worker after. */
  private ahead(count: number): number {
    return this.useWorkers(count + 1) ? this.workerCount * QUEUED_PER_WORKER : 1;
  }

  private useWorkers(batchNumber: number): boolean {
    return this.workerCount > 0 && batchNumber > this.inlineBatches;
  }

  private prepareOne(batch: LineBatch, batchNumber: number): Promise<PreparedBatch> {
    const withColumns = Atomics.load(this.rejected, 0) === 0;
    if (!this.useWorkers(batchNumber)) {
      return Promise.resolve(prepareBatch(batch.bytes, batch.firstLine, withColumns));
    }
    const worker = this.worker(batchNumber);
    const id = this.nextId++;
    return new Promise<PreparedBatch>((resolve, reject) => {
      this.requests.set(id, { resolve, reject });
      const bytes = ownedBuffer(batch.bytes);
      worker.postMessage({ id, bytes, firstLine: batch.firstLine }, [bytes.buffer as ArrayBuffer]);
    });
  }

  private worker(batchNumber: number): Worker {
    if (this.closed) throw new Error('the import stopped');
    if (this.workers.length < this.workerCount) this.workers.push(this.startWorker());
    return this.workers[batchNumber % this.workers.length] as Worker;
  }

  private startWorker(): Worker {
    const { url, execArgv } = workerScript(import.meta.url, 'parse-worker');
    const worker = new Worker(url, {
      execArgv,
      workerData: { rejected: this.rejected.buffer, niceness: this.niceness },
    });
    worker.on('message', ({ id, batch }: { id: number; batch: PreparedBatch }) => {
      const request = this.requests.get(id);
      this.requests.delete(id);
      request?.resolve(batch);
    });
    const fail = (error: unknown) => {
      for (const request of this.requests.values()) request.reject(error);
      this.requests.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!this.closed) fail(new Error(`an import worker stopped unexpectedly (exit code ${code})`));
    });
    return worker;
  }
}
