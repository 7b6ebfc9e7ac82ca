/**
 * The events of one GraphQL subscription between the live-updates hub, which pushes, and the
 * transport (Yoga's SSE stream, graphql-ws), which pulls when its client can take more. The
 * queue is bounded: a push beyond MAX_QUEUED_EVENTS, or while the connection already holds more
 * than MAX_BACKLOG_BYTES unsent, is refused, and the hub drops the subscriber.
 */
import type { ProfileChangeEvent } from '../../../service/live-updates.js';
import type { StreamConnection } from '../context.js';

export const MAX_QUEUED_EVENTS = 64;
export const MAX_BACKLOG_BYTES = 1024 * 1024;

export class EventQueue implements AsyncIterableIterator<ProfileChangeEvent> {
  readonly #events: ProfileChangeEvent[] = [];
  #waiting: ((result: IteratorResult<ProfileChangeEvent>) => void) | undefined;
  #done = false;

  constructor(
    private readonly connection: StreamConnection | undefined,
    /** Called once when the consumer stops (client gone, complete): releases the subscription. */
    private readonly onStop: () => void,
  ) {}

  push(event: ProfileChangeEvent): boolean {
    if (this.#done) return true;
    if ((this.connection?.backlog() ?? 0) > MAX_BACKLOG_BYTES) return false;
    if (this.#waiting !== undefined) {
      const resolve = this.#waiting;
      this.#waiting = undefined;
      resolve({ value: event, done: false });
      return true;
    }
    if (this.#events.length >= MAX_QUEUED_EVENTS) return false;
    this.#events.push(event);
    return true;
  }

  /** Ends the stream from the server side; a dropped client's connection is cut as well. */
  end(reason: 'dropped' | 'shutdown' | 'revoked'): void {
    if (reason === 'dropped') this.connection?.drop();
    this.#finish();
  }

  next(): Promise<IteratorResult<ProfileChangeEvent>> {
    const event = this.#events.shift();
    if (event !== undefined) return Promise.resolve({ value: event, done: false });
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<ProfileChangeEvent>> {
    this.#finish();
    this.onStop();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ProfileChangeEvent> {
    return this;
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#events.length = 0;
    const resolve = this.#waiting;
    this.#waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }
}
