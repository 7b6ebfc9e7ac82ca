/**
 * The events of one GraphQL subscription between the live-updates hub, which pushes, and the
 * transport (Yoga's SSE stream, graphql-ws), which pulls when its client can take more.
 *
 * The subscription's slot is taken on the transport's first pull, not when the subscription is
 * made: Yoga makes it before it decides how to answer, and a request it then refuses (406 to an
 * `Accept` no stream matches) or whose client is gone never pulls, so it never holds a slot.
 *
 * A reader that reads is never dropped, however large one import's burst: the queue holds at
 * most one event per watched name (a newer event of a name replaces the queued one, which it
 * supersedes: events carry the profile as it now is), so it is bounded by the 100 names of a
 * subscription, not by the length of a burst. A client that does not read is dropped: a push is
 * refused while its connection holds more than MAX_BACKLOG_BYTES written and unsent, or when
 * events have waited and the transport has not pulled for MAX_UNREAD_MS (it pulls as soon as the
 * client took the previous event, so a stalled client stops its pulls).
 */
import type { LiveAdmission, LiveSubscription, ProfileChangeEvent } from '../../../service/live-updates.js';
import type { StreamConnection } from '../context.js';

export const MAX_BACKLOG_BYTES = 1024 * 1024;
export const MAX_UNREAD_MS = 30_000;

export class EventQueue implements AsyncIterableIterator<ProfileChangeEvent> {
  /** Queued events by name, in the order their names were first queued. */
  readonly #events = new Map<string, ProfileChangeEvent>();
  #waiting: ((result: IteratorResult<ProfileChangeEvent>) => void) | undefined;
  #subscription: LiveSubscription | undefined;
  #lastPull: number;
  #done = false;

  constructor(
    private readonly admission: LiveAdmission,
    private readonly connection: StreamConnection | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.#lastPull = now();
  }

  push(event: ProfileChangeEvent): boolean {
    if (this.#done) return true;
    if ((this.connection?.backlog() ?? 0) > MAX_BACKLOG_BYTES) return false;
    if (this.#waiting !== undefined) {
      const resolve = this.#waiting;
      this.#waiting = undefined;
      resolve({ value: event, done: false });
      return true;
    }
    if (this.#events.size > 0 && this.now() - this.#lastPull > MAX_UNREAD_MS) return false;
    this.#events.set(event.name, event);
    return true;
  }

  /** Ends the stream from the server side; a dropped client's connection is cut as well. */
  end(reason: 'dropped' | 'shutdown' | 'revoked'): void {
    if (reason === 'dropped') this.connection?.drop();
    this.#finish();
  }

  next(): Promise<IteratorResult<ProfileChangeEvent>> {
    this.#lastPull = this.now();
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    if (this.#subscription === undefined) {
      try {
        this.#subscription = this.admission.open(this.connection?.transport ?? 'sse', this);
      } catch (error) {
        this.#finish();
        return Promise.reject(error);
      }
    }
    const [first] = this.#events;
    if (first !== undefined) {
      this.#events.delete(first[0]);
      return Promise.resolve({ value: first[1], done: false });
    }
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<ProfileChangeEvent>> {
    this.#finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<ProfileChangeEvent> {
    return this;
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#events.clear();
    this.#subscription?.close();
    const resolve = this.#waiting;
    this.#waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }
}
