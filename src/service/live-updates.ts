/**
 * Live updates: clients subscribe to names, or to a namespace, and are told each time one of their
 * profiles changes (GraphQL `profileChanged` over SSE and WebSocket, REST `/api/{name_id}/events`
 * and `/api/changes/events`). The transports are thin; this hub owns the rules they share:
 *
 * - a subscription is validated like a lookup (1 to MAX_NAMES_PER_REQUEST names, one point of the
 *   profile budget per distinct name: `checkNameList`, which `profiles(names:)` uses; a namespace
 *   costs one point) and takes a slot: at most `perClient` open subscriptions per client key and
 *   `total` per process, the next one is refused as rate-limited. Admitting and taking the slot
 *   are two steps (`admit`, then `open`): a transport opens only once it really answers with a
 *   stream, so a request refused after its subscription was made (406 to an `Accept` no stream
 *   matches, a client gone before the answer) never holds a slot;
 * - events come from the change log (src/db/change-log.ts), which the hub reads after the last
 *   position it reached ("tails"), in log order: whenever the change feed (src/db/change-feed.ts)
 *   says something changed or may have, and once a second while anybody watches. The log is
 *   durable, so a notification lost with a connection loses nothing: the next tail finds it. Every
 *   event carries its change's cursor, and a subscriber gets only changes after its own position;
 * - the event carries the profile as the primary has it when the event is sent, which is at least
 *   as new as the change it reports: one read per tail for all the names that changed, whatever
 *   the number of subscribers. Changes of one name within a tail are one event, with the latest
 *   cursor, so a subscriber never gets an older state after a newer one;
 * - a subscription opens at a position: the client's cursor (`Last-Event-ID`, `after`), or the
 *   hub's position when it was admitted. Before its first live event it is sent the names that
 *   changed since then (their latest change each, in log order), so nothing committed after its
 *   cursor, or after it was answered, is missed. A cursor older than the log keeps is refused, or
 *   answered with a reset (REST: "refetch"), as the transport asks;
 * - a subscriber whose transport cannot take an event (its client does not read) is dropped:
 *   buffers stay bounded.
 */

import type { RateLimitDecision, RateLimiter } from '../limits/rate-limit.js';
import { comparePositions, type LogEntry, type LogPage, type LogPosition } from '../loaders/change-log.js';
import type { Logger } from '../logging/logger.js';
import { parseNamespace } from '../names/name-id.js';
import type { Profile } from '../profiles/profile.js';
import { decodeChangeCursor, encodeChangeCursor } from './change-cursors.js';
import { INVALID_CHANGE_CURSOR_MESSAGE, INVALID_FEED_NAMESPACE_MESSAGE } from './changes.js';
import {
  CursorExpiredError,
  describeFailure,
  InvalidInputError,
  RateLimitedError,
  UnavailableError,
} from './errors.js';
import { checkNameList, spend } from './profiles-service.js';
import type { ServiceRequest } from './request.js';

export const NO_NAMES_MESSAGE = 'At least one name is required';
/** What a refused subscription tells the client to wait: slots free when others close, not on a clock. */
const SLOT_RETRY_AFTER_SECONDS = 5;
/** How long a read the database could not answer waits before it is tried again. */
const RETRY_READ_MS = 1000;
/** How often the log is read while anybody watches, notification or not. */
const TAIL_INTERVAL_MS = 1000;
/** Entries read from the log per statement. */
const TAIL_PAGE = 1000;
/**
 * The most entries a namespace subscription's catch-up looks at: past that, its client is told
 * to start over (a reset) rather than the server scanning everything since an old cursor.
 */
const NAMESPACE_CATCH_UP_SCAN = 100_000;

/** One change of a watched name: its profile now, null when there is none (removed). */
export interface ProfileChangeEvent {
  name: string;
  profile: Profile | null;
  /** The change's place in the log: resume after it. */
  cursor: string;
}

export type LiveTransport = 'sse' | 'websocket' | 'rest';

/** Why a subscription was told to start over: names, or a namespace, to read again. */
export interface LiveReset {
  /** The names to read again (a namespace subscription: every name of `namespace`). */
  names: readonly string[];
  namespace: string | undefined;
  /** Where to resume once they are read again. */
  cursor: string;
}

/** Where a subscription's events go: one per transport (GraphQL event queue, REST stream). */
export interface LiveSink {
  /** Hands over an event; false when the client is too far behind (it is dropped then). */
  push(event: ProfileChangeEvent): boolean;
  /** Tells the client to read its profiles again (see LiveTarget's `resume`). */
  reset?(reset: LiveReset): boolean;
  /**
   * The hub ends the subscription: the client was too slow, the server shuts down, or the API key
   * it was opened with was revoked (ended cleanly, like a shutdown).
   */
  end(reason: 'dropped' | 'shutdown' | 'revoked'): void;
}

export interface LiveSubscription {
  /** The distinct canonical names watched (none for a namespace subscription). */
  readonly names: readonly string[];
  /** The profile budget's decision (REST sends it as RateLimit-* headers). */
  readonly rateLimit: RateLimitDecision | undefined;
  /** Releases the slot; idempotent (a transport calls it when its client goes away). */
  close(): void;
}

/** A subscription checked and admitted, holding no slot until it is opened. */
export interface LiveAdmission {
  readonly names: readonly string[];
  readonly rateLimit: RateLimitDecision | undefined;
  /**
   * Takes the slot and starts the events: the transport calls it once it answers with a stream.
   * Throws RateLimitedError when the bounds filled since the admission (or the hub closed).
   */
  open(transport: LiveTransport, sink: LiveSink): LiveSubscription;
}

/** What a subscription watches, and from where. */
export interface LiveTarget {
  /** Name IDs as given; or */
  names?: readonly string[];
  /** a namespace as given. */
  namespace?: string;
  /** A cursor: events of changes after it only, and first the names that changed since. */
  after?: string;
  /**
   * What an invalid cursor, or one older than the log keeps, gets: `refuse` (InvalidInputError,
   * CursorExpiredError: GraphQL's explicit argument) or `reset` (the sink's reset, then live
   * events: REST's `Last-Event-ID`, which a client sends by itself after any event).
   */
  resume?: 'refuse' | 'reset';
}

export interface LiveUpdateStats {
  open: Record<LiveTransport, number>;
  /** Client keys holding at least one slot. */
  clients: number;
  watchedNames: number;
  events: number;
  dropped: number;
  refused: number;
  reads: number;
}

export interface LiveUpdates {
  /**
   * Checks a subscription: the names (or namespace), the cursor, the budget, and that the client
   * and the process have a slot left. Throws InvalidInputError (no names, too many, invalid ones:
   * the first in `name`, all in `invalidIndexes`; an invalid namespace or cursor),
   * CursorExpiredError or RateLimitedError (the profile budget, or no slot left). The slot is taken
   * by the admission's `open`.
   */
  admit(request: ServiceRequest, target: LiveTarget): Promise<LiveAdmission>;
  /** `admit` and `open` at once, for a transport that answers with the stream right away. */
  subscribe(
    request: ServiceRequest,
    target: LiveTarget,
    transport: LiveTransport,
    sink: LiveSink,
  ): Promise<LiveSubscription>;
  /** The change feed's handlers call these (see src/service/change-feed.ts): the log is read. */
  changed(names: readonly string[]): void;
  everythingMayHaveChanged(): void;
  stats(): LiveUpdateStats;
  /** The clients (rate-limit keys) with open subscriptions. */
  openClients(): string[];
  /** Ends every subscription of one client (an API key that was revoked); returns how many. */
  endClient(clientKey: string): number;
  /** Ends every subscription (shutdown) and refuses new ones. */
  close(): void;
}

/** The change log as the hub reads it (src/loaders/change-log.ts, on the primary). */
export interface LiveLog {
  end(): Promise<LogPosition>;
  pruned(): Promise<LogPosition>;
  page(after: LogPosition, limit: number): Promise<LogPage>;
  latestOfNames(names: readonly string[], after: LogPosition, upTo: LogPosition): Promise<LogEntry[]>;
  latestOfNamespace(
    namespace: string,
    after: LogPosition,
    upTo: LogPosition,
    scan: number,
  ): Promise<LogEntry[] | undefined>;
}

export interface LiveUpdatesDeps {
  log: LiveLog;
  /** The profiles as the primary has them now: at least as new as any change read from the log. */
  readProfiles(names: readonly string[]): Promise<Array<Profile | null>>;
  /** The profile budget; null when switched off. */
  budget: RateLimiter | null;
  logger: Logger;
  /** Resolves once changes are heard (the app starts its change feed on first use). */
  ready?: () => Promise<void>;
  /** Open subscriptions per client key, and per process (LIVE_SUBSCRIPTIONS_PER_CLIENT, _MAX). */
  perClient: number;
  total: number;
}

interface Subscriber {
  readonly sink: LiveSink;
  readonly names: readonly string[];
  readonly namespace: string | undefined;
  readonly clientKey: string;
  readonly transport: LiveTransport;
  /**
   * Changes after this position are the subscriber's; until it has caught up, the position it
   * opened at: undefined when the database could not tell it then (it starts where the log is
   * once it can be read).
   */
  from: LogPosition | undefined;
  /** It has been sent what changed between its opening position and the hub's: live events go to it. */
  caughtUp: boolean;
  /** Its opening position could not be honoured (invalid or pruned cursor): reset it first. */
  resetFirst: boolean;
}

/** The canonical names and namespace a target watches, with the budget it drew. */
interface CheckedTarget {
  names: string[];
  namespace: string | undefined;
  rateLimit: RateLimitDecision | undefined;
}

export function createLiveUpdates(deps: LiveUpdatesDeps): LiveUpdates {
  const { perClient, total, log } = deps;
  const byName = new Map<string, Set<Subscriber>>();
  const byNamespace = new Map<string, Set<Subscriber>>();
  const perClientOpen = new Map<string, number>();
  const subscribers = new Set<Subscriber>();
  const catchingUp: Subscriber[] = [];
  const counters = { events: 0, dropped: 0, refused: 0, reads: 0 };
  /** The hub's place in the log: every change up to it has been sent; undefined while nobody watches. */
  let position: LogPosition | undefined;
  /** The last position the hub knew, watched or not: where to start when the log cannot be read now. */
  let lastKnown: LogPosition | undefined;
  let positioning: Promise<LogPosition> | undefined;
  let tailWanted = false;
  let pumping = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let tailTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const logFailedRead = (error: unknown, what: string) =>
    deps.logger.warn(
      { code: failureCode(error), reason: describeFailure(error) },
      `live updates: ${what} failed; retrying`,
    );

  /** The hub's position, read from the end of the log when nobody watched before. */
  const currentPosition = (): Promise<LogPosition> => {
    if (position !== undefined) return Promise.resolve(position);
    positioning ??= log.end().then(
      (end) => {
        positioning = undefined;
        position ??= end;
        lastKnown = position;
        return position;
      },
      (error: unknown) => {
        positioning = undefined;
        throw error;
      },
    );
    return positioning;
  };

  const watchersOf = (name: string): Subscriber[] => {
    const named = byName.get(name);
    const spaced = byNamespace.get(name.slice(name.lastIndexOf('@') + 1));
    if (named === undefined) return spaced === undefined ? [] : [...spaced];
    return spaced === undefined ? [...named] : [...named, ...spaced];
  };

  const send = (subscriber: Subscriber, event: ProfileChangeEvent) => {
    if (!subscribers.has(subscriber)) return;
    counters.events += 1;
    if (!subscriber.sink.push(event)) drop(subscriber);
  };

  /** The profiles of entries' names, read once, as one event per entry in log order. */
  const eventsOf = async (entries: readonly LogEntry[]): Promise<ProfileChangeEvent[]> => {
    if (entries.length === 0) return [];
    counters.reads += 1;
    const profiles = await deps.readProfiles(entries.map((entry) => entry.name));
    return entries.map((entry, index) => ({
      name: entry.name,
      profile: profiles[index] ?? null,
      cursor: encodeChangeCursor(entry),
    }));
  };

  /** The latest entry of each name, in the order of those latest entries. */
  const latestByName = (entries: readonly LogEntry[]): LogEntry[] => {
    const latest = new Map<string, LogEntry>();
    for (const entry of entries) {
      latest.delete(entry.name);
      latest.set(entry.name, entry);
    }
    return [...latest.values()];
  };

  /** Reads the log after the hub's position and sends what watched names changed. */
  const tail = async (): Promise<void> => {
    const from = await currentPosition();
    const watched: LogEntry[] = [];
    let next = from;
    for (;;) {
      const page = await log.page(next, TAIL_PAGE);
      for (const entry of page.entries) if (watchersOf(entry.name).length > 0) watched.push(entry);
      next = page.next;
      if (!page.hasMore) break;
    }
    const latest = latestByName(watched);
    const events = await eventsOf(latest);
    position = next;
    lastKnown = next;
    latest.forEach((entry, index) => {
      const event = events[index];
      if (event === undefined) return;
      for (const subscriber of watchersOf(entry.name)) {
        const { caughtUp, from: after } = subscriber;
        if (caughtUp && after !== undefined && comparePositions(entry, after) > 0) send(subscriber, event);
      }
    });
  };

  /** Sends a subscriber what changed between its opening position and the hub's, then live events. */
  const catchUp = async (subscriber: Subscriber): Promise<void> => {
    const upTo = await currentPosition();
    const from = subscriber.from ?? upTo;
    const cursor = encodeChangeCursor(upTo);
    // As `send`: the subscriber may have closed while the log was read (a HEAD answered, a client gone).
    const reset = () => {
      if (subscribers.has(subscriber)) {
        subscriber.sink.reset?.({ names: subscriber.names, namespace: subscriber.namespace, cursor });
      }
    };
    if (subscriber.resetFirst || comparePositions(from, await log.pruned()) < 0) {
      reset();
    } else if (comparePositions(from, upTo) < 0) {
      const entries =
        subscriber.namespace === undefined
          ? await log.latestOfNames(subscriber.names, from, upTo)
          : await log.latestOfNamespace(subscriber.namespace, from, upTo, NAMESPACE_CATCH_UP_SCAN);
      if (entries === undefined) reset();
      else for (const event of await eventsOf(entries)) send(subscriber, event);
    }
    subscriber.from = comparePositions(upTo, from) > 0 ? upTo : from;
    subscriber.caughtUp = true;
  };

  /**
   * The one loop that reads the log and sends events: catch-ups and tails run one at a time, so a
   * subscriber's events leave in log order.
   */
  const pump = async (): Promise<void> => {
    if (pumping || closed) return;
    pumping = true;
    try {
      for (;;) {
        const subscriber = catchingUp[0];
        if (subscriber !== undefined) {
          if (subscribers.has(subscriber)) await catchUp(subscriber);
          catchingUp.shift();
        } else if (tailWanted && subscribers.size > 0) {
          tailWanted = false;
          await tail();
        } else {
          break;
        }
      }
    } catch (error) {
      logFailedRead(error, 'reading changes');
      tailWanted = true;
      retryTimer ??= setTimeout(() => {
        retryTimer = undefined;
        void pump();
      }, RETRY_READ_MS).unref();
    } finally {
      pumping = false;
    }
  };

  const wantTail = () => {
    if (subscribers.size === 0) return;
    tailWanted = true;
    void pump();
  };

  const watch = (subscriber: Subscriber, on: boolean) => {
    const keys = subscriber.namespace === undefined ? subscriber.names : [subscriber.namespace];
    const index = subscriber.namespace === undefined ? byName : byNamespace;
    for (const key of keys) {
      let set = index.get(key);
      if (on) {
        if (set === undefined) {
          set = new Set();
          index.set(key, set);
        }
        set.add(subscriber);
      } else {
        set?.delete(subscriber);
        if (set?.size === 0) index.delete(key);
      }
    }
  };

  const release = (subscriber: Subscriber) => {
    if (!subscribers.delete(subscriber)) return;
    const left = (perClientOpen.get(subscriber.clientKey) ?? 1) - 1;
    if (left === 0) perClientOpen.delete(subscriber.clientKey);
    else perClientOpen.set(subscriber.clientKey, left);
    watch(subscriber, false);
    if (subscribers.size === 0) {
      // Nobody watches: the next subscriber starts from the end of the log, not from here.
      clearInterval(tailTimer);
      tailTimer = undefined;
      position = undefined;
    }
  };

  const drop = (subscriber: Subscriber) => {
    if (!subscribers.has(subscriber)) return;
    counters.dropped += 1;
    release(subscriber);
    subscriber.sink.end('dropped');
  };

  const refuse = (limit: number): never => {
    counters.refused += 1;
    const decision: RateLimitDecision = {
      allowed: false,
      limit,
      remaining: 0,
      resetSeconds: SLOT_RETRY_AFTER_SECONDS,
    };
    throw new RateLimitedError(decision);
  };

  const checkSlot = (clientKey: string) => {
    if (closed) refuse(0);
    if ((perClientOpen.get(clientKey) ?? 0) >= perClient) refuse(perClient);
    if (subscribers.size >= total) refuse(total);
  };

  const checkTarget = async (request: ServiceRequest, target: LiveTarget): Promise<CheckedTarget> => {
    if (target.namespace !== undefined) {
      const rateLimit = await spend(deps.budget, request, 1);
      const namespace = parseNamespace(target.namespace);
      if (namespace === null) throw new InvalidInputError(INVALID_FEED_NAMESPACE_MESSAGE, rateLimit);
      return { names: [], namespace, rateLimit };
    }
    const rawNames = target.names ?? [];
    if (rawNames.length === 0) throw new InvalidInputError(NO_NAMES_MESSAGE);
    const checked = await checkNameList(deps.budget, request, rawNames);
    return { names: [...new Set(checked.names)], namespace: undefined, rateLimit: checked.rateLimit };
  };

  /**
   * Where nothing is resumed: the hub's position. When the database cannot tell it now, the
   * subscription is admitted all the same (an `EventSource` refused with a 503 would not come
   * back) at the last position the hub knew, or, when it never knew one, at the log's end once
   * the log can be read.
   */
  const hereIfKnown = async (): Promise<LogPosition | undefined> => {
    try {
      return await currentPosition();
    } catch (error) {
      if (error instanceof UnavailableError) return lastKnown;
      throw error;
    }
  };

  /** The position a subscription opens at, and whether it has to be reset first. */
  const openingPosition = async (
    target: LiveTarget,
    rateLimit: RateLimitDecision | undefined,
  ): Promise<{ from: LogPosition | undefined; resetFirst: boolean }> => {
    const decoded = target.after === undefined ? undefined : decodeChangeCursor(target.after);
    // `now` resumes nothing: the same as no cursor.
    if (target.after === undefined || decoded === 'now') return { from: await hereIfKnown(), resetFirst: false };
    if (decoded === undefined) {
      if (target.resume === 'reset') return { from: undefined, resetFirst: true };
      throw new InvalidInputError(INVALID_CHANGE_CURSOR_MESSAGE, rateLimit);
    }
    if (target.resume !== 'reset' && comparePositions(decoded, await deps.log.pruned()) < 0) {
      throw new CursorExpiredError(rateLimit);
    }
    return { from: decoded, resetFirst: false };
  };

  const open = (
    request: ServiceRequest,
    checked: CheckedTarget,
    opening: { from: LogPosition | undefined; resetFirst: boolean },
    transport: LiveTransport,
    sink: LiveSink,
  ): LiveSubscription['close'] => {
    checkSlot(request.clientKey);
    const subscriber: Subscriber = {
      sink,
      names: checked.names,
      namespace: checked.namespace,
      clientKey: request.clientKey,
      transport,
      from: opening.from,
      caughtUp: false,
      resetFirst: opening.resetFirst,
    };
    subscribers.add(subscriber);
    perClientOpen.set(request.clientKey, (perClientOpen.get(request.clientKey) ?? 0) + 1);
    watch(subscriber, true);
    tailTimer ??= setInterval(wantTail, TAIL_INTERVAL_MS).unref();
    catchingUp.push(subscriber);
    void pump();
    return () => release(subscriber);
  };

  const admit = async (request: ServiceRequest, target: LiveTarget): Promise<LiveAdmission> => {
    const checked = await checkTarget(request, target);
    await deps.ready?.();
    checkSlot(request.clientKey);
    const opening = await openingPosition(target, checked.rateLimit);
    let opened = false;
    return {
      names: checked.names,
      rateLimit: checked.rateLimit,
      open(transport, sink) {
        if (opened) throw new Error('a live-update admission was opened twice');
        opened = true;
        return {
          names: checked.names,
          rateLimit: checked.rateLimit,
          close: open(request, checked, opening, transport, sink),
        };
      },
    };
  };

  return {
    admit,

    async subscribe(request, target, transport, sink) {
      return (await admit(request, target)).open(transport, sink);
    },

    changed: () => wantTail(),
    everythingMayHaveChanged: () => wantTail(),

    stats() {
      const openCount: Record<LiveTransport, number> = { sse: 0, websocket: 0, rest: 0 };
      for (const subscriber of subscribers) openCount[subscriber.transport] += 1;
      return {
        open: openCount,
        clients: perClientOpen.size,
        watchedNames: byName.size + byNamespace.size,
        ...counters,
      };
    },

    openClients: () => [...perClientOpen.keys()],

    endClient(clientKey) {
      const ended = [...subscribers].filter((subscriber) => subscriber.clientKey === clientKey);
      for (const subscriber of ended) {
        release(subscriber);
        subscriber.sink.end('revoked');
      }
      return ended.length;
    },

    close() {
      closed = true;
      clearTimeout(retryTimer);
      clearInterval(tailTimer);
      for (const subscriber of [...subscribers]) {
        release(subscriber);
        subscriber.sink.end('shutdown');
      }
    },
  };
}

/** The code of a failure for logs: the innermost code of its causes (the driver's), else its kind. */
function failureCode(error: unknown): string {
  let code = error instanceof Error ? error.name : 'UNKNOWN';
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const own = (current as { code?: unknown }).code;
    if (typeof own === 'string') code = own;
  }
  return code;
}
