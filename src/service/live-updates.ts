/**
 * Live updates: clients subscribe to names and are told each time one of their profiles changes
 * (GraphQL `profileChanged` over SSE and WebSocket, REST `/api/{name_id}/events`). The transports
 * are thin; this hub owns the rules they share:
 *
 * - a subscription is validated like a lookup (1 to MAX_NAMES_PER_REQUEST names, one point of
 *   the profile budget per distinct name: `checkNameList`, which `profiles(names:)` uses) and
 *   takes a slot: at most `perClient` open subscriptions per client key and `total` per process,
 *   the next one is refused as rate-limited. Admitting and taking the slot are two steps
 *   (`admit`, then `open`): a transport opens only once it really answers with a stream, so a
 *   request refused after its subscription was made (406 to an `Accept` no stream matches, a
 *   client gone before the answer) never holds a slot;
 * - changes come from the database's change feed (src/db/change-feed.ts), the one that keeps the
 *   profile cache fresh, so every instance hears an import made anywhere. The feed calls the
 *   cache's eviction first, then the hub, so the read below cannot be answered from the cache's
 *   old entry;
 * - the event carries the profile as a lookup reads it right after the change, through the same
 *   read path (cache, loaders, replicas with the freshness rule of src/db/freshness.ts), so a
 *   client that reacts by looking the profile up gets the same one. Reads are shared: one read
 *   per changed name per change, whatever the number of subscribers, and the names of one change
 *   go in one batch. A name is never read twice at once: a change heard while its read runs is
 *   read again after it, so events of one name arrive in order and the last one is current;
 * - a subscriber whose transport cannot take an event (its client does not read) is dropped:
 *   buffers stay bounded;
 * - when the feed was lost and is back (changes may have been missed) or a writer says
 *   "everything changed", every watched name is read again and an event goes out where the
 *   profile differs from the one last seen.
 */

import type { RateLimitDecision, RateLimiter } from '../limits/rate-limit.js';
import type { Logger } from '../logging/logger.js';
import type { Profile } from '../profiles/profile.js';
import { describeFailure, InvalidInputError, RateLimitedError } from './errors.js';
import { checkNameList } from './profiles-service.js';
import type { ServiceRequest } from './request.js';

export const NO_NAMES_MESSAGE = 'At least one name is required';
/** What a refused subscription tells the client to wait: slots free when others close, not on a clock. */
const SLOT_RETRY_AFTER_SECONDS = 5;
/** How long a read the database could not answer waits before it is tried again. */
const RETRY_READ_MS = 1000;

/** One change of a watched name: its profile now, null when there is none (removed). */
export interface ProfileChangeEvent {
  name: string;
  profile: Profile | null;
}

export type LiveTransport = 'sse' | 'websocket' | 'rest';

/** Where a subscription's events go: one per transport (GraphQL event queue, REST stream). */
export interface LiveSink {
  /** Hands over an event; false when the client is too far behind (it is dropped then). */
  push(event: ProfileChangeEvent): boolean;
  /**
   * The hub ends the subscription: the client was too slow, the server shuts down, or the API key
   * it was opened with was revoked (ended cleanly, like a shutdown).
   */
  end(reason: 'dropped' | 'shutdown' | 'revoked'): void;
}

export interface LiveSubscription {
  /** The distinct canonical names watched. */
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
   * Checks a subscription to `rawNames`: the names, the budget, and that the client and the
   * process have a slot left. Throws InvalidInputError (no names, too many, invalid ones: the
   * first in `name`, all in `invalidIndexes`) or RateLimitedError (the profile budget, or no
   * slot left). The slot is taken by the admission's `open`.
   */
  admit(request: ServiceRequest, rawNames: readonly string[]): Promise<LiveAdmission>;
  /** `admit` and `open` at once, for a transport that answers with the stream right away. */
  subscribe(
    request: ServiceRequest,
    rawNames: readonly string[],
    transport: LiveTransport,
    sink: LiveSink,
  ): Promise<LiveSubscription>;
  /** The change feed's handlers call these (see src/service/change-feed.ts). */
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

export interface LiveUpdatesDeps {
  /** The profiles as a lookup reads them now (no budget): the service's read path. */
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

/** What to do when a name is read next: the strongest request wins. */
type ReadMode = 'baseline' | 'check' | 'changed';
const MODE_RANK: Record<ReadMode, number> = { baseline: 0, check: 1, changed: 2 };

interface Subscriber {
  readonly sink: LiveSink;
  readonly names: readonly string[];
  readonly clientKey: string;
  readonly transport: LiveTransport;
}

/** A name somebody watches: its subscribers and the state of its shared read. */
interface Watched {
  readonly subscribers: Set<Subscriber>;
  /** ETag of the profile last read, null for none, undefined before the first read. */
  seen: string | null | undefined;
  reading: boolean;
  next: ReadMode | undefined;
  /**
   * Subscribers that joined after another profile than `seen` was what they knew (it was announced
   * while they were being admitted): the next read sends them the profile, changed or not.
   */
  owed: Set<Subscriber> | undefined;
}

export function createLiveUpdates(deps: LiveUpdatesDeps): LiveUpdates {
  const { perClient, total } = deps;
  const watched = new Map<string, Watched>();
  const perClientOpen = new Map<string, number>();
  const subscribers = new Set<Subscriber>();
  const counters = { events: 0, dropped: 0, refused: 0, reads: 0 };
  let closed = false;
  let flushScheduled = false;

  const want = (watchedName: Watched, mode: ReadMode) => {
    if (watchedName.next === undefined || MODE_RANK[mode] > MODE_RANK[watchedName.next]) watchedName.next = mode;
  };

  const scheduleFlush = (delayMs = 0) => {
    if (flushScheduled) return;
    flushScheduled = true;
    // Coalesces the notifications of one turn (a long list arrives in several) into one batch.
    const run = () => {
      flushScheduled = false;
      void flush();
    };
    if (delayMs === 0) setImmediate(run);
    else setTimeout(run, delayMs).unref();
  };

  const deliver = (name: string, entry: Watched, mode: ReadMode, profile: Profile | null) => {
    const etag = profile?.etag ?? null;
    const known = entry.seen !== undefined;
    const differs = known && entry.seen !== etag;
    const { owed } = entry;
    entry.seen = etag;
    entry.owed = undefined;
    // An event announces a profile its subscribers have not been sent: none when the read finds
    // what was last seen, though a change was heard (another read announced it already, as a
    // check that was running when the notification came, or the change was undone meanwhile).
    // A check of a name never read is its first reading, not a change. Subscribers owed the
    // profile get it either way.
    const unchanged = mode === 'baseline' || (known ? !differs : mode === 'check');
    const recipients = unchanged ? owed : entry.subscribers;
    if (recipients === undefined) return;
    const event: ProfileChangeEvent = { name, profile };
    for (const subscriber of recipients) {
      if (!entry.subscribers.has(subscriber)) continue; // gone since it was owed
      counters.events += 1;
      if (!subscriber.sink.push(event)) drop(subscriber);
    }
  };

  // A reason and a code, as the request path logs: never the statement, its parameters (profile
  // names) or a stack.
  const logFailedRead = (error: unknown, names: number) =>
    deps.logger.warn(
      { code: failureCode(error), reason: describeFailure(error), names },
      'live updates: reading changed profiles failed; retrying',
    );

  /**
   * What a subscriber knows of its names when its subscription is answered (their ETags). For a
   * watched name, the profile last read, which its subscribers were sent. The names nobody watches
   * yet are read: a change committed after the answer then differs from it, also one whose
   * notification came while the change feed was not live (heard again only as "everything may
   * have changed"). Read after the answer, as it once was, the baseline could already hold such a
   * change and hide it. Without them when the read fails: the names then get their baseline read
   * after opening, retried as any read.
   */
  const readBaselines = async (names: readonly string[]): Promise<Map<string, string | null>> => {
    const baselines = new Map<string, string | null>();
    const unwatched: string[] = [];
    for (const name of names) {
      const entry = watched.get(name);
      if (entry === undefined) unwatched.push(name);
      else if (entry.seen !== undefined) baselines.set(name, entry.seen);
    }
    if (unwatched.length === 0) return baselines;
    counters.reads += 1;
    try {
      const profiles = await deps.readProfiles(unwatched);
      unwatched.forEach((name, index) => {
        baselines.set(name, profiles[index]?.etag ?? null);
      });
    } catch (error) {
      logFailedRead(error, unwatched.length);
    }
    return baselines;
  };

  const flush = async () => {
    const batch: Array<[string, Watched, ReadMode]> = [];
    for (const [name, entry] of watched) {
      if (entry.reading || entry.next === undefined) continue;
      batch.push([name, entry, entry.next]);
      entry.reading = true;
      entry.next = undefined;
    }
    if (batch.length === 0) return;
    counters.reads += 1;
    try {
      const profiles = await deps.readProfiles(batch.map(([name]) => name));
      batch.forEach(([name, entry, mode], index) => {
        entry.reading = false;
        deliver(name, entry, mode, profiles[index] ?? null);
      });
    } catch (error) {
      logFailedRead(error, batch.length);
      for (const [, entry, mode] of batch) {
        entry.reading = false;
        want(entry, mode);
      }
      scheduleFlush(RETRY_READ_MS);
      return;
    }
    if ([...watched.values()].some((entry) => entry.next !== undefined)) scheduleFlush();
  };

  const release = (subscriber: Subscriber) => {
    if (!subscribers.delete(subscriber)) return;
    const left = (perClientOpen.get(subscriber.clientKey) ?? 1) - 1;
    if (left === 0) perClientOpen.delete(subscriber.clientKey);
    else perClientOpen.set(subscriber.clientKey, left);
    for (const name of subscriber.names) {
      const entry = watched.get(name);
      entry?.subscribers.delete(subscriber);
      if (entry?.subscribers.size === 0) watched.delete(name);
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

  const open = (
    request: ServiceRequest,
    names: readonly string[],
    baselines: ReadonlyMap<string, string | null>,
    transport: LiveTransport,
    sink: LiveSink,
  ): LiveSubscription['close'] => {
    checkSlot(request.clientKey);
    const subscriber: Subscriber = { sink, names, clientKey: request.clientKey, transport };
    subscribers.add(subscriber);
    perClientOpen.set(request.clientKey, (perClientOpen.get(request.clientKey) ?? 0) + 1);
    for (const name of names) {
      let entry = watched.get(name);
      const baseline = baselines.get(name);
      if (entry === undefined) {
        entry = { subscribers: new Set(), seen: baseline, reading: false, next: undefined, owed: undefined };
        watched.set(name, entry);
        // With the admission's baseline: whether it changed before the name was watched (its
        // notification went to nobody). Without: what it is now, so that a later "everything
        // changed" can tell what did.
        want(entry, entry.seen === undefined ? 'baseline' : 'check');
        scheduleFlush();
      } else if (baseline !== undefined && entry.seen !== undefined && baseline !== entry.seen) {
        // Announced to the others between this subscriber's answer and now: it is owed the profile.
        entry.owed ??= new Set();
        entry.owed.add(subscriber);
        want(entry, 'check');
        scheduleFlush();
      }
      entry.subscribers.add(subscriber);
    }
    return () => release(subscriber);
  };

  const admit = async (request: ServiceRequest, rawNames: readonly string[]): Promise<LiveAdmission> => {
    if (rawNames.length === 0) throw new InvalidInputError(NO_NAMES_MESSAGE);
    const checked = await checkNameList(deps.budget, request, rawNames);
    const names = [...new Set(checked.names)];
    await deps.ready?.();
    checkSlot(request.clientKey);
    const baselines = await readBaselines(names);
    let opened = false;
    return {
      names,
      rateLimit: checked.rateLimit,
      open(transport, sink) {
        if (opened) throw new Error('a live-update admission was opened twice');
        opened = true;
        return { names, rateLimit: checked.rateLimit, close: open(request, names, baselines, transport, sink) };
      },
    };
  };

  return {
    admit,

    async subscribe(request, rawNames, transport, sink) {
      return (await admit(request, rawNames)).open(transport, sink);
    },

    changed(names) {
      let any = false;
      for (const name of names) {
        const entry = watched.get(name);
        if (entry === undefined) continue;
        want(entry, 'changed');
        any = true;
      }
      if (any) scheduleFlush();
    },

    everythingMayHaveChanged() {
      for (const entry of watched.values()) want(entry, 'check');
      if (watched.size > 0) scheduleFlush();
    },

    stats() {
      const open: Record<LiveTransport, number> = { sse: 0, websocket: 0, rest: 0 };
      for (const subscriber of subscribers) open[subscriber.transport] += 1;
      return { open, clients: perClientOpen.size, watchedNames: watched.size, ...counters };
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
