/**
 * The origin process's own code: new variants made by ./origin-images.ts in a process of its own
 * at idle priority, for ./origin-process.ts. What the observer is told goes back as messages; so
 * do the variants and the errors (as their class name, failure and message: an Error object does
 * not cross processes).
 */
import { createAddressPolicy } from '../outbound/address-policy.js';
import { OriginImages } from './origin-images.js';
import type { ErrorReport, OriginMessage, OriginProcessSettings, ServiceMessage } from './origin-messages.js';
import { lowerThisProcess } from './process-priority.js';

const [settingsArgument] = process.argv.slice(2);
if (process.send === undefined || settingsArgument === undefined) {
  throw new Error('origin-child.ts runs as the service’s child process (src/avatars/origin-process.ts)');
}
const settings = JSON.parse(settingsArgument) as OriginProcessSettings;
// Before anything starts a thread of its own: threads started later inherit the lowered priority.
if (settings.idlePriority) lowerThisProcess();
process.title = 'nps-avatar-origins';

const send = (message: OriginMessage) =>
  new Promise<void>((resolve, reject) => {
    process.send?.(message, undefined, undefined, (error) => (error ? reject(error) : resolve()));
  });

let fetchIds = 0;
let making = 0;
let stopping = false;

/** Asked to stop: once nothing is being made, the process ends (see OriginProcess.close). */
function stopWhenIdle(): void {
  if (stopping && making === 0) process.exit(0);
}

function started(settings: OriginProcessSettings): OriginImages {
  const { allowed, idlePriority: _idlePriority, ...options } = settings;
  // A message that cannot be sent means the service is gone: nothing is left to tell.
  const tell = (message: OriginMessage) => void send(message).catch(() => {});
  return new OriginImages({
    ...options,
    policy: createAddressPolicy(allowed),
    observer: {
      fetchStarted(host, job) {
        const fetch = fetchIds++;
        tell({ kind: 'fetch-started', job: job ?? -1, fetch, host });
        return (outcome, bytes, seconds) => tell({ kind: 'fetch-ended', fetch, outcome, bytes, seconds });
      },
      resized(seconds) {
        tell({ kind: 'resized', seconds });
      },
    },
  });
}

function make(maker: OriginImages, id: number, request: Extract<ServiceMessage, { kind: 'job' }>['request']): void {
  making += 1;
  maker
    .make(request, id)
    .then((resized) => send({ kind: 'made', job: id, body: resized.body, format: resized.format }))
    // Whatever failed, the making or the sending of its result, the job gets an answer: a job
    // without one would leave its requests waiting.
    .catch((error: unknown) => send({ kind: 'failed', job: id, error: reportOf(error) }))
    .catch(() => {}) // the service is gone
    .finally(() => {
      making -= 1;
      stopWhenIdle();
    });
}

const images = started(settings);

process.on('message', (message: ServiceMessage) => {
  switch (message.kind) {
    case 'job':
      make(images, message.id, message.request);
      return;
    case 'stop':
      stopping = true;
      stopWhenIdle();
      return;
  }
});

// The service ended (even by SIGKILL, its end closes the channel): nothing is left to make for.
process.on('disconnect', () => process.exit(0));

/** The error as plain data, whatever was thrown. */
function reportOf(error: unknown): ErrorReport {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), failure: undefined };
  const { failure } = error as Error & { failure?: unknown };
  return { name: error.name, message: error.message, failure: typeof failure === 'string' ? failure : undefined };
}
