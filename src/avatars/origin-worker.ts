/**
 * The origin thread's own code: new variants made by ./origin-images.ts on a worker thread, for
 * ./origin-thread.ts. What the observer is told goes back as messages; so do the variants and the
 * errors (as their class name, failure and message: an Error object does not cross threads).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createAddressPolicy } from './address-policy.js';
import { OriginImages } from './origin-images.js';
import type { ErrorReport, OriginJob, OriginThreadSettings, WorkerMessage } from './origin-messages.js';
import { nameAndLowerThisThread, ORIGIN_THREAD_NAME } from './resize-priority.js';

const port = parentPort;
if (port === null) throw new Error('origin-worker.ts runs as a worker thread (src/avatars/origin-thread.ts)');
nameAndLowerThisThread(ORIGIN_THREAD_NAME);

const { allowed, ...settings } = workerData as OriginThreadSettings;
const send = (message: WorkerMessage, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);

let fetchIds = 0;

const images = new OriginImages({
  ...settings,
  policy: createAddressPolicy(allowed),
  observer: {
    fetchStarted(host, job) {
      const fetch = fetchIds++;
      send({ kind: 'fetch-started', job: job ?? -1, fetch, host });
      return (outcome, bytes) => send({ kind: 'fetch-ended', fetch, outcome, bytes });
    },
    resized(seconds) {
      send({ kind: 'resized', seconds });
    },
  },
});

let making = 0;
let stopping = false;

/** Asked to stop: once nothing is being made, the thread ends (see OriginThread.close). */
function stopWhenIdle(): void {
  if (stopping && making === 0) process.exit(0);
}

port.on('message', (message: OriginJob | 'stop') => {
  if (message === 'stop') {
    stopping = true;
    stopWhenIdle();
    return;
  }
  const job = message;
  making += 1;
  images
    .make(job.request, job.id)
    .then((resized) => {
      // sharp's output lives in memory V8 cannot hand over (an external buffer): a copy of the
      // few kilobytes is, and it is moved rather than copied again.
      const body = Uint8Array.prototype.slice.call(resized.body);
      send({ kind: 'made', job: job.id, body, format: resized.format }, [body.buffer]);
    })
    // Whatever failed, the making or the sending of its result, the job gets an answer: a job
    // without one would leave its requests waiting.
    .catch((error: unknown) => send({ kind: 'failed', job: job.id, error: reportOf(error) }))
    .finally(() => {
      making -= 1;
      stopWhenIdle();
    });
});

/** The error as plain data, whatever was thrown. */
function reportOf(error: unknown): ErrorReport {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), failure: undefined };
  const { failure } = error as Error & { failure?: unknown };
  return { name: error.name, message: error.message, failure: typeof failure === 'string' ? failure : undefined };
}
