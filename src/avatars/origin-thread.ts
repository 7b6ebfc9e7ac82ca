/**
 * New avatar variants made on a thread of their own (./origin-worker.ts running
 * ./origin-images.ts), at idle priority (./resize-priority.ts). On the event loop, a new variant
 * would cost the lookups beside it more than its CPU: the fetch's socket reads, sharp's calls and
 * the collections of 485 KB originals run there in stretches of milliseconds. Here the event loop
 * only posts a request and receives the variant's bytes; what the origin thread observes
 * (fetches, resizes) is reported back and given to the observer in the asking request's async
 * context, so metrics and the origin-fetch span are as they were in-process.
 *
 * The thread starts with the first new variant (sharp and libvips are loaded there, not in the
 * event loop's heap). If it stops (a crash, a heap limit), the variants it was making fail
 * ('error', the fallback answers) and the next new variant starts another.
 */
import { AsyncResource } from 'node:async_hooks';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logging/logger.js';
import { workerScript } from '../workers/worker-script.js';
import { loadSharp, type ResizedImage, UnusableImageError } from './image-resize.js';
import {
  BusyError,
  type ImageOutcome,
  type OriginImagesOptions,
  type VariantMaker,
  type VariantRequest,
} from './origin-images.js';
import type { ErrorReport, OriginJob, OriginThreadSettings, WorkerMessage } from './origin-messages.js';
import { ORIGIN_THREAD_NAME } from './resize-priority.js';
import { type FetchFailure, OriginFetchError } from './safe-fetch.js';

/**
 * The origin thread's V8 heap: originals live outside it (Buffers), so a small heap serves and
 * keeps the thread's share of the service's RSS small.
 */
const HEAP_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 };
/** How long `close` waits for the thread to finish what it is making before it lets it be. */
const CLOSE_WAIT_MS = 2000;

interface PendingJob {
  resolve(image: ResizedImage): void;
  reject(error: Error): void;
  /** The asking request's async context: the figures and spans of its fetch belong to it. */
  scope: AsyncResource;
}

export class OriginThread implements VariantMaker {
  private worker: Promise<Worker> | undefined;
  private readonly jobs = new Map<number, PendingJob>();
  private readonly fetchesEnded = new Map<number, (outcome: ImageOutcome, bytes: number) => void>();
  private nextJob = 0;

  constructor(
    private readonly options: Omit<OriginImagesOptions, 'resolve'>,
    private readonly logger: Logger,
  ) {}

  async make(request: VariantRequest): Promise<ResizedImage> {
    const worker = await this.started();
    const id = this.nextJob++;
    return new Promise<ResizedImage>((resolve, reject) => {
      this.jobs.set(id, { resolve, reject, scope: new AsyncResource('avatar-variant') });
      const job: OriginJob = { id, request };
      worker.postMessage(job);
    });
  }

  async close(): Promise<void> {
    const starting = this.worker;
    this.worker = undefined;
    this.failAll('the service is stopping');
    const worker = await starting?.catch(() => undefined);
    if (worker === undefined) return;
    // Asked, not terminated: a worker ended in the middle of a libvips call can take the process
    // with it (lovell/sharp#2263). It stops once what it is making is done.
    const exited = once(worker, 'exit');
    worker.postMessage('stop');
    await Promise.race([exited, delay(CLOSE_WAIT_MS, undefined, { ref: false })]);
  }

  private started(): Promise<Worker> {
    this.worker ??= this.start().catch((error: unknown) => {
      this.worker = undefined; // the next new variant tries again
      throw error;
    });
    return this.worker;
  }

  private async start(): Promise<Worker> {
    // sharp in this thread too: on glibc, libvips' shared libraries are unloaded when the last
    // thread that loaded them ends, and a later thread that loads them again crashes
    // (lovell/sharp#2263, and sharp's documentation on worker threads).
    await loadSharp();
    const { policy, observer: _observer, ...copied } = this.options;
    const settings: OriginThreadSettings = { ...copied, allowed: policy.allowed };
    const { url, execArgv } = workerScript(import.meta.url, 'origin-worker');
    const worker = new Worker(url, {
      name: ORIGIN_THREAD_NAME,
      execArgv,
      workerData: settings,
      resourceLimits: HEAP_LIMITS,
    });
    // Waiting for variants is the requests' business: the thread keeps no process alive.
    worker.unref();
    const started = this.worker;
    worker.on('message', (message: WorkerMessage) => {
      // A closed thread finishing what it was making: its jobs have failed already, and its
      // fetch numbers would mix with a new thread's.
      if (this.worker === started) this.received(message);
    });
    worker.on('error', (error) => {
      this.logger.error({ err: error }, 'the avatar origin thread failed; new variants start another');
    });
    worker.on('exit', (code) => {
      if (this.worker !== started) return; // closed
      this.worker = undefined;
      this.failAll(`the avatar origin thread stopped (exit code ${code})`);
    });
    return worker;
  }

  private received(message: WorkerMessage): void {
    switch (message.kind) {
      case 'fetch-started': {
        const { observer } = this.options;
        if (observer === undefined) return;
        const scope = this.jobs.get(message.job)?.scope;
        const start = () => observer.fetchStarted(message.host);
        this.fetchesEnded.set(message.fetch, scope === undefined ? start() : scope.runInAsyncScope(start));
        return;
      }
      case 'fetch-ended': {
        const ended = this.fetchesEnded.get(message.fetch);
        this.fetchesEnded.delete(message.fetch);
        ended?.(message.outcome, message.bytes);
        return;
      }
      case 'resized':
        this.options.observer?.resized(message.seconds);
        return;
      case 'made': {
        const job = this.settled(message.job);
        const { body } = message;
        job?.resolve({ body: Buffer.from(body.buffer, body.byteOffset, body.byteLength), format: message.format });
        return;
      }
      case 'failed':
        this.settled(message.job)?.reject(errorOf(message.error));
        return;
    }
  }

  private settled(id: number): PendingJob | undefined {
    const job = this.jobs.get(id);
    this.jobs.delete(id);
    job?.scope.emitDestroy();
    return job;
  }

  private failAll(reason: string): void {
    for (const id of [...this.jobs.keys()]) this.settled(id)?.reject(new Error(reason));
    // Fetches the thread started and will never end: their figures end as errors.
    for (const ended of this.fetchesEnded.values()) ended('error', 0);
    this.fetchesEnded.clear();
  }
}

/** The error the origin thread reported, as its class, so outcomes and log levels stay as they were. */
function errorOf({ name, message, failure }: ErrorReport): Error {
  if (name === 'OriginFetchError') return new OriginFetchError(failure as FetchFailure, message);
  if (name === 'UnusableImageError') return new UnusableImageError(failure as 'not-image' | 'too-large', message);
  if (name === 'BusyError') return new BusyError(message);
  return new Error(message);
}
