/**
 * New avatar variants made in a process of its own, the origin process (./origin-child.ts
 * running ./origin-images.ts), at idle priority (./process-priority.ts). In the service's
 * process, a new variant would cost the lookups beside it more than its CPU: the fetch's socket
 * reads, sharp's calls and the collections of large originals run on the event loop, and even
 * on a thread of its own they share libuv's pool, V8's helper threads and the memory map with
 * the event loop, all at its priority. Here the service only sends a job and receives the
 * variant's bytes; what the origin process observes (fetches, resizes) is reported back and given
 * to the observer in the asking request's async context, so metrics and the origin-fetch span are
 * as they were in-process.
 *
 * The process starts with the first new variant (sharp and libvips are loaded there, never in the
 * service). If it ends (a crash, its heap limit, a kill), the variants it was making fail
 * ('internal-error', the fallback answers), the end is logged, and the next new variant starts another;
 * but after the second end in a row (processes that each lived less than a minute), not at once
 * (restartPauseMs): a process that cannot start, or that images keep crashing, would otherwise be
 * forked for every new variant, each start costing CPU at the service's priority before it
 * lowers itself (docs/decisions.md, "Making variants at idle priority, in a process of its own").
 * It ends with the service: asked at shutdown, and by itself when the service's channel closes.
 * It is given none of the service's secrets (./origin-environment.ts).
 */
import { AsyncResource } from 'node:async_hooks';
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../logging/logger.js';
import { childProcessScript } from '../workers/worker-script.js';
import { type GateClock, REAL_CLOCK } from './concurrency.js';
import { type ImageFailure, type ResizedImage, UnusableImageError } from './image-resize.js';
import { originEnvironment } from './origin-environment.js';
import {
  BusyError,
  type FetchEnd,
  hostOf,
  type OriginImagesOptions,
  type VariantMaker,
  type VariantRequest,
} from './origin-images.js';
import type { ErrorReport, OriginMessage, OriginProcessSettings, ServiceMessage } from './origin-messages.js';
import { OutboundError, type OutboundFailure } from './safe-fetch.js';

/**
 * The origin process's V8 heap: originals live outside it (Buffers), so a small heap serves and
 * keeps the process small.
 */
const HEAP_FLAGS = ['--max-old-space-size=64', '--max-semi-space-size=2'];
/** How long `close` waits for the process to finish what it is making before it is killed. */
const CLOSE_WAIT_MS = 2000;
const FIRST_RESTART_PAUSE_MS = 1000;
const LONGEST_RESTART_PAUSE_MS = 60_000;
/** A process that lived this long before it ended starts a new row of ends. */
const STABLE_LIFETIME_MS = 60_000;

/**
 * How long new variants wait for another origin process (they get the fallback meanwhile) after
 * `endsInARow` ends that no one asked for: none after one (a crash of one image's decoding should
 * not cost the next image), then 1 s, doubling up to a minute.
 */
export function restartPauseMs(endsInARow: number): number {
  if (endsInARow < 2) return 0;
  return Math.min(FIRST_RESTART_PAUSE_MS * 2 ** (endsInARow - 2), LONGEST_RESTART_PAUSE_MS);
}

/**
 * The ends in a row once a process that lived `livedMs` has ended: a row goes on while each
 * process ends within a minute of its start, made variants or not (an image that crashes the
 * process, asked for between good ones, must not have it forked again at once each time).
 */
export function endsInARowAfter(previous: number, livedMs: number): number {
  return livedMs >= STABLE_LIFETIME_MS ? 1 : previous + 1;
}

/** What the origin process is started with. */
export type OriginProcessOptions = Omit<OriginImagesOptions, 'resolve'> & {
  /** Whether the process lowers itself to idle priority (./process-priority.ts): true but in tests. */
  idlePriority: boolean;
};

interface PendingJob {
  resolve(image: ResizedImage): void;
  reject(error: Error): void;
  /** The asking request's async context: the figures and spans of its fetch belong to it. */
  scope: AsyncResource;
}

export class OriginProcess implements VariantMaker {
  private child: ChildProcess | undefined;
  private readonly jobs = new Map<number, PendingJob>();
  /** The fetches the process has started and not ended: their ends, and when they started. */
  private readonly fetchesEnded = new Map<number, { end: FetchEnd; started: number }>();
  private nextJob = 0;
  /** Ends no one asked for, in a row (endsInARowAfter). */
  private endsInARow = 0;
  /** When the current process started (the clock's time). */
  private startedAt = 0;
  /** When another process may start (the clock's time), and why not before. */
  private pause: { until: number; reason: string } | undefined;

  constructor(
    private readonly options: OriginProcessOptions,
    private readonly logger: Logger,
    private readonly clock: GateClock = REAL_CLOCK,
  ) {}

  make(request: VariantRequest): Promise<ResizedImage> {
    if (this.child === undefined && this.pause !== undefined && this.clock.now() < this.pause.until) {
      // Counted with the fetches, as one that found no slot: nothing was fetched. Logged once, at the end.
      this.options.observer?.fetchStarted(hostOf(request.url))('busy', 0, 0);
      return Promise.reject(new BusyError(this.pause.reason, true));
    }
    const child = this.started();
    const id = this.nextJob++;
    return new Promise<ResizedImage>((resolve, reject) => {
      // While a variant is awaited, the channel keeps the service's event loop alive (as the
      // request waiting for it would); idle, it does not.
      if (this.jobs.size === 0) child.channel?.ref();
      this.jobs.set(id, { resolve, reject, scope: new AsyncResource('avatar-variant') });
      this.sendTo(child, { kind: 'job', id, request }, (error) =>
        this.settled(id)?.reject(new Error(`the avatar origin process could not be reached: ${error.message}`)),
      );
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.failAll('the service is stopping');
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    this.sendTo(child, { kind: 'stop' }, () => child.kill('SIGKILL'));
    const finished = await Promise.race([exited.then(() => true), delay(CLOSE_WAIT_MS, false, { ref: false })]);
    if (finished) return;
    // Still making a variant after the wait: nothing of the service waits for it any more. Closed
    // means gone: the kill is waited for (a stopped process ends at SIGKILL too).
    child.kill('SIGKILL');
    await exited;
  }

  private started(): ChildProcess {
    if (this.child !== undefined) return this.child;
    const { policy, observer: _observer, ...copied } = this.options;
    const settings: OriginProcessSettings = { ...copied, allowed: policy.allowed };
    const { path, execArgv } = childProcessScript(import.meta.url, 'origin-child');
    const child = fork(path, [JSON.stringify(settings)], {
      execArgv: [...execArgv, ...HEAP_FLAGS],
      serialization: 'advanced',
      env: originEnvironment(process.env),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child = child;
    this.startedAt = this.clock.now();
    // An idle origin process keeps the service alive no longer (see make).
    child.unref();
    child.channel?.unref();
    child.on('message', (message: OriginMessage) => {
      // A closed process finishing what it was making: its jobs have failed already, and its
      // fetch numbers would mix with a new process's.
      if (this.child === child) this.received(message);
    });
    child.on('error', (error) => {
      // It may still run (an 'error' is also a message that could not be sent): no process is left
      // behind that no one asks for anything.
      child.kill('SIGKILL');
      this.endedUnasked(child, `the avatar origin process failed: ${error.message}`, { err: error });
    });
    child.on('exit', (code, signal) => {
      const how = signal === null ? `exit code ${code}` : `signal ${signal}`;
      this.endedUnasked(child, `the avatar origin process ended (${how})`, { code, signal });
    });
    return child;
  }

  /** The process ended or failed without being asked to: logged once, and perhaps a pause before the next. */
  private endedUnasked(child: ChildProcess, reason: string, details: object): void {
    if (this.child !== child) return; // closed, or ended already
    this.child = undefined;
    const now = this.clock.now();
    this.endsInARow = endsInARowAfter(this.endsInARow, now - this.startedAt);
    const pauseMs = restartPauseMs(this.endsInARow);
    let next = 'new ones start another';
    if (pauseMs > 0) {
      const seconds = pauseMs / 1000;
      next = `it ended ${this.endsInARow} times in a row, each within a minute of its start, so new ones get the fallback for ${seconds} s before another starts`;
      this.pause = {
        until: now + pauseMs,
        reason: `the avatar origin process is paused for ${seconds} s after ending ${this.endsInARow} times in a row`,
      };
    }
    this.logger.error(details, `${reason}; the variants it was making get the fallback, ${next}`);
    this.failAll(reason);
  }

  /** Sends, and calls `failed` when the message cannot be delivered (the process is gone). */
  private sendTo(child: ChildProcess, message: ServiceMessage, failed: (error: Error) => void): void {
    if (!child.connected) {
      failed(new Error('its channel is closed'));
      return;
    }
    child.send(message, (error) => {
      if (error) failed(error);
    });
  }

  private received(message: OriginMessage): void {
    switch (message.kind) {
      case 'fetch-started': {
        const { observer } = this.options;
        if (observer === undefined) return;
        const scope = this.jobs.get(message.job)?.scope;
        const start = () => observer.fetchStarted(message.host);
        const end = scope === undefined ? start() : scope.runInAsyncScope(start);
        this.fetchesEnded.set(message.fetch, { end, started: performance.now() });
        return;
      }
      case 'fetch-ended': {
        const ended = this.fetchesEnded.get(message.fetch);
        this.fetchesEnded.delete(message.fetch);
        ended?.end(message.outcome, message.bytes, message.seconds);
        return;
      }
      case 'resized':
        this.options.observer?.resized(message.seconds);
        return;
      case 'made': {
        const job = this.settled(message.job);
        // Copied out of the message's buffer, which it would otherwise keep whole for as long as
        // the variant is kept (the memory layer counts what a variant's buffer holds).
        const body = Buffer.allocUnsafeSlow(message.body.byteLength);
        body.set(message.body);
        job?.resolve({ body, format: message.format });
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
    if (this.jobs.size === 0) this.child?.channel?.unref();
    return job;
  }

  private failAll(reason: string): void {
    for (const id of [...this.jobs.keys()]) this.settled(id)?.reject(new Error(reason));
    // Fetches the process started and will never end: their figures end as the service's own failure.
    const now = performance.now();
    for (const { end, started } of this.fetchesEnded.values()) end('internal-error', 0, (now - started) / 1000);
    this.fetchesEnded.clear();
  }
}

/** The error the origin process reported, as its class, so outcomes and log levels stay as they were. */
function errorOf({ name, message, failure }: ErrorReport): Error {
  if (name === 'OutboundError') return new OutboundError(failure as OutboundFailure, message);
  if (name === 'UnusableImageError') return new UnusableImageError(failure as ImageFailure, message);
  if (name === 'BusyError') return new BusyError(message);
  return new Error(message);
}
