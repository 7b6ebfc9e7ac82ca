/**
 * The live-updates hub and a GraphQL subscription's event queue, without a server: the hub on an
 * in-memory change log (the same LiveLog interface src/loaders/change-log.ts gives it on a real
 * database). What it sends and when: every change once, in log order, with its cursor; nothing
 * committed after a subscriber's position missed (also while it was being admitted, and without a
 * notification); a resumed subscriber's catch-up; refusals and resets of cursors; what it logs when
 * the database cannot answer; when a subscription takes its slot; and which readers the queue's
 * bounds drop.
 */
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import type { LogEntry, LogPosition } from '../src/db/change-log.js';
import type { StreamConnection } from '../src/graphql/schema/context.js';
import { EventQueue, MAX_BACKLOG_BYTES, MAX_UNREAD_MS } from '../src/graphql/schema/subscriptions/event-queue.js';
import type { Profile } from '../src/profiles/profile.js';
import { encodeChangeCursor } from '../src/service/change-cursors.js';
import { CursorExpiredError, InvalidInputError, RateLimitedError, UnavailableError } from '../src/service/errors.js';
import {
  createLiveUpdates,
  type LiveLog,
  type LiveReset,
  type LiveUpdatesDeps,
  type ProfileChangeEvent,
} from '../src/service/live-updates.js';
import { ServiceRequest } from '../src/service/request.js';
import { eventually } from './support/eventually.js';
import { captureLog } from './support/log-capture.js';

const compare = (a: LogPosition, b: LogPosition) => a.commitSeq - b.commitSeq || a.seq - b.seq;

/** A change log in memory, with the profiles its changes left: what the hub reads. */
class MemoryLog implements LiveLog {
  readonly entries: LogEntry[] = [];
  readonly profiles = new Map<string, string>();
  pruneTo: LogPosition = { commitSeq: 0, seq: 0 };
  private commitSeq = 0;
  private seq = 0;

  /** One transaction: each name changed (described), or removed (undefined). */
  commit(changes: Record<string, string | undefined>): LogEntry[] {
    this.commitSeq += 1;
    const committed = Object.entries(changes).map(([name, description]): LogEntry => {
      const existed = this.profiles.has(name);
      if (description === undefined) this.profiles.delete(name);
      else this.profiles.set(name, description);
      this.seq += 1;
      const kind = description === undefined ? 'removed' : existed ? 'updated' : 'created';
      return { commitSeq: this.commitSeq, seq: this.seq, kind, name, committedAt: new Date() };
    });
    this.entries.push(...committed);
    return committed;
  }

  async end() {
    const last = this.entries.at(-1);
    return last === undefined ? this.pruneTo : { commitSeq: last.commitSeq, seq: last.seq };
  }
  async pruned() {
    return this.pruneTo;
  }
  async page(after: LogPosition, limit: number) {
    const found = this.entries.filter((entry) => compare(entry, after) > 0);
    const entries = found.slice(0, limit);
    return { entries, next: entries.at(-1) ?? after, hasMore: found.length > limit };
  }
  async latestOfNames(names: readonly string[], after: LogPosition, upTo: LogPosition) {
    return this.latest((entry) => names.includes(entry.name), after, upTo);
  }
  async latestOfNamespace(namespace: string, after: LogPosition, upTo: LogPosition, scan: number) {
    const within = this.entries.filter((entry) => compare(entry, after) > 0 && compare(entry, upTo) <= 0);
    if (within.length > scan) return undefined;
    return this.latest((entry) => entry.name.endsWith(`@${namespace}`), after, upTo);
  }
  private latest(matches: (entry: LogEntry) => boolean, after: LogPosition, upTo: LogPosition) {
    const latest = new Map<string, LogEntry>();
    for (const entry of this.entries) {
      if (!matches(entry) || compare(entry, after) <= 0 || compare(entry, upTo) > 0) continue;
      latest.delete(entry.name);
      latest.set(entry.name, entry);
    }
    return [...latest.values()];
  }
  readProfiles = async (names: readonly string[]) =>
    names.map((name) => {
      const description = this.profiles.get(name);
      return description === undefined ? null : ({ name, description, document: '{}' } as unknown as Profile);
    });
}

const request = (clientKey = '192.0.2.1') => new ServiceRequest(clientKey, 'request-1');
const hub = (log = new MemoryLog(), deps: Partial<LiveUpdatesDeps> = {}) =>
  createLiveUpdates({
    log,
    readProfiles: log.readProfiles,
    budget: null,
    logger: captureLog().logger,
    perClient: 20,
    total: 10_000,
    ...deps,
  });

/** A sink that keeps what it gets: events as "name description cursor", resets. */
function collecting() {
  const events: ProfileChangeEvent[] = [];
  const resets: LiveReset[] = [];
  return {
    events,
    resets,
    said: () => events.map((event) => `${event.name} ${event.profile?.description ?? '(removed)'}`),
    sink: {
      push: (event: ProfileChangeEvent) => events.push(event) > 0,
      reset: (reset: LiveReset) => resets.push(reset) > 0,
      end: () => {},
    },
  };
}

describe('the live-updates hub', () => {
  it('sends each change once, in log order, with its cursor; changes of one name read together are one event', async () => {
    const log = new MemoryLog();
    log.commit({ 'ada@me': 'zero' });
    const live = hub(log);
    const got = collecting();
    const subscription = await live.subscribe(request(), { names: ['ada@me', 'bob@me'] }, 'rest', got.sink);
    const [ada] = log.commit({ 'ada@me': 'one' });
    live.changed(['ada@me']);
    await eventually(() => got.events.length === 1, 'the first change');
    log.commit({ 'bob@me': 'one' });
    const [ada2] = log.commit({ 'ada@me': 'two' });
    const [ada3] = log.commit({ 'ada@me': 'three', 'cy@me': 'not watched' });
    live.changed(['bob@me', 'ada@me']);
    await eventually(() => got.events.length === 3, 'the next changes');
    expect(got.said()).toEqual(['ada@me one', 'bob@me one', 'ada@me three']);
    expect(got.events[0]?.cursor).toBe(encodeChangeCursor(ada!));
    expect(got.events[2]?.cursor).toBe(encodeChangeCursor(ada3!));
    expect(ada2).toBeDefined();
    // Heard again, nothing new: nothing sent.
    live.changed(['ada@me']);
    await eventually(async () => (await live.stats()).reads >= 2, 'the reads');
    expect(got.events).toHaveLength(3);
    subscription.close();
    live.close();
  });

  it('sends a change committed while a subscriber was being admitted, and one nobody announced', async () => {
    const log = new MemoryLog();
    const live = hub(log);
    const others = collecting();
    await live.subscribe(request('192.0.2.9'), { names: ['ada@me'] }, 'rest', others.sink);
    const admission = await live.admit(request(), { names: ['ada@me'] });
    // Committed and sent to the others after the answer, before the subscription opened.
    log.commit({ 'ada@me': 'while admitted' });
    live.changed(['ada@me']);
    await eventually(() => others.events.length === 1, 'the change to the others');
    const late = collecting();
    admission.open('rest', late.sink);
    await eventually(() => late.events.length === 1, 'the change to the late subscriber');
    // A change whose notification never came (the feed was away): the log is read once a second.
    log.commit({ 'ada@me': 'unannounced' });
    await eventually(() => late.events.length === 2, 'the unannounced change');
    expect(late.said()).toEqual(['ada@me while admitted', 'ada@me unannounced']);
    expect(others.said()).toEqual(['ada@me while admitted', 'ada@me unannounced']);
    live.close();
  });

  it('resumes after a cursor: the names changed since, in the order of their latest changes, then live', async () => {
    const log = new MemoryLog();
    const [start] = log.commit({ 'ada@me': 'one', 'bob@me': 'one' });
    const [ada2] = log.commit({ 'ada@me': 'two' });
    log.commit({ 'bob@me': undefined });
    log.commit({ 'ada@me': 'three', 'cy@me': 'one' });
    const live = hub(log);
    const got = collecting();
    await live.subscribe(
      request(),
      { names: ['ada@me', 'bob@me'], after: encodeChangeCursor(start!) },
      'rest',
      got.sink,
    );
    await eventually(() => got.events.length === 2, 'the catch-up');
    // bob's removal came before ada's last change.
    expect(got.said()).toEqual(['bob@me (removed)', 'ada@me three']);
    expect(got.events.map((event) => event.cursor)).toEqual(
      log.entries
        .filter((entry) => entry.name === 'bob@me' || entry.name === 'ada@me')
        .slice(-2)
        .map(encodeChangeCursor),
    );
    log.commit({ 'ada@me': 'four' });
    live.changed(['ada@me']);
    await eventually(() => got.events.length === 3, 'the live change');
    expect(got.said().at(-1)).toBe('ada@me four');
    // A cursor after every change of the names: nothing to catch up.
    const current = collecting();
    const after = encodeChangeCursor(log.entries.at(-1)!);
    await live.subscribe(request(), { names: ['ada@me'], after }, 'rest', current.sink);
    log.commit({ 'ada@me': 'five' });
    live.changed(['ada@me']);
    await eventually(() => current.events.length === 1, 'only the next change');
    expect(current.said()).toEqual(['ada@me five']);
    expect(ada2).toBeDefined();
    live.close();
  });

  it('refuses, or resets, a cursor the log no longer keeps or that is not one of ours', async () => {
    const log = new MemoryLog();
    const [old] = log.commit({ 'ada@me': 'one' });
    log.commit({ 'ada@me': 'two' });
    log.pruneTo = { commitSeq: 1, seq: 1 };
    log.entries.shift();
    const live = hub(log);
    const expired = encodeChangeCursor({ commitSeq: 0, seq: 0 });
    await expect(live.admit(request(), { names: ['ada@me'], after: expired, resume: 'refuse' })).rejects.toBeInstanceOf(
      CursorExpiredError,
    );
    await expect(live.admit(request(), { names: ['ada@me'], after: 'junk', resume: 'refuse' })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    for (const after of [expired, 'junk']) {
      const got = collecting();
      await live.subscribe(request(), { names: ['ada@me', 'bob@me'], after, resume: 'reset' }, 'rest', got.sink);
      await eventually(() => got.resets.length === 1, 'the reset');
      expect(got.resets[0]).toEqual({
        names: ['ada@me', 'bob@me'],
        namespace: undefined,
        cursor: encodeChangeCursor(log.entries.at(-1)!),
      });
      expect(got.events).toEqual([]);
      log.commit({ 'bob@me': after });
      live.changed(['bob@me']);
      await eventually(() => got.events.length === 1, 'live events after the reset');
    }
    // The cursor where pruning stopped is still one the log can continue from.
    const got = collecting();
    await live.subscribe(
      request(),
      { names: ['ada@me'], after: encodeChangeCursor(old!), resume: 'refuse' },
      'rest',
      got.sink,
    );
    await eventually(() => got.events.length === 1, 'the catch-up from the pruned position');
    expect(got.said()).toEqual(['ada@me two']);
    live.close();
  });

  it('watches a namespace: its names only, caught up after a cursor, reset past the catch-up bound', async () => {
    const log = new MemoryLog();
    const [start] = log.commit({ 'ada@me': 'one' });
    log.commit({ 'bob@me': 'one', 'x@other': 'one' });
    const live = hub(log);
    const got = collecting();
    await live.subscribe(request(), { namespace: 'ME', after: encodeChangeCursor(start!) }, 'rest', got.sink);
    await eventually(() => got.events.length === 1, 'the catch-up');
    log.commit({ 'x@other': 'two', 'cy@me': 'one' });
    live.changed(['cy@me']);
    await eventually(() => got.events.length === 2, 'the live change');
    expect(got.said()).toEqual(['bob@me one', 'cy@me one']);
    await expect(live.admit(request(), { namespace: '-bad-' })).rejects.toBeInstanceOf(InvalidInputError);
    live.close();
  });

  it('logs a failed read with a reason and a code: no SQL, no parameters (profile names), no stack; and retries it', async () => {
    const log = new MemoryLog();
    const capture = captureLog('debug');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    let fail = true;
    const live = hub(log, {
      logger: capture.logger,
      readProfiles: async (names) => {
        if (fail) {
          fail = false;
          throw new DrizzleQueryError('select "id", "name" from "profiles" where "name" = $1', ['vera@me'], refused);
        }
        return log.readProfiles(names);
      },
    });
    const got = collecting();
    await live.subscribe(request(), { names: ['vera@me'] }, 'rest', got.sink);
    log.commit({ 'vera@me': 'one' });
    live.changed(['vera@me']);
    await eventually(() => capture.find('warn', 'live updates').length > 0, 'the warning');
    const [line] = capture.find('warn', 'live updates');
    expect(line).toMatchObject({ code: 'ECONNREFUSED', reason: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432' });
    expect(JSON.stringify(capture.lines)).not.toMatch(/select|vera|params|stack|\.ts:|\.js:/i);
    await eventually(() => got.events.length === 1, 'the change, read again');
    live.close();
  });

  it('admits a subscription while the database cannot be read: from the last position it knew, else from the end once it can', async () => {
    const log = new MemoryLog();
    log.commit({ 'ada@me': 'before' });
    const end = log.end.bind(log);
    let down = true;
    let endsRead = 0;
    log.end = async () => {
      if (down) throw new UnavailableError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      endsRead += 1;
      return end();
    };
    const live = hub(log);
    // It never knew a position: a change before the log could be read is not this subscriber's.
    const first = collecting();
    const subscription = await live.subscribe(request(), { names: ['ada@me'] }, 'rest', first.sink);
    log.commit({ 'ada@me': 'unknown' });
    down = false;
    live.changed(['ada@me']);
    await eventually(() => endsRead > 0, 'the log read again');
    log.commit({ 'ada@me': 'known' });
    live.changed(['ada@me']);
    await eventually(() => first.events.length === 1, 'a change after the log could be read');
    expect(first.said()).toEqual(['ada@me known']);
    subscription.close();
    // Now it knows one: a change while the log cannot be read is sent once it can.
    down = true;
    const second = collecting();
    await live.subscribe(request(), { names: ['ada@me'] }, 'rest', second.sink);
    log.commit({ 'ada@me': 'while down' });
    down = false;
    live.changed(['ada@me']);
    await eventually(() => second.events.length === 1, 'the change made while the log could not be read');
    expect(second.said()).toEqual(['ada@me while down']);
    live.close();
  });

  it('checks names like profiles(names:): the first invalid name and the indexes of all, one point per distinct name', async () => {
    const live = hub();
    const error = await live
      .admit(request(), { names: ['a@me', 'bad', 'A@ME', 'worse one'] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).details).toEqual({ name: 'bad', invalidIndexes: [1, 3] });
    await expect(live.admit(request(), { names: [] })).rejects.toThrow('At least one name is required');
    await expect(live.admit(request(), { names: Array.from({ length: 101 }, (_, i) => `n${i}@me`) })).rejects.toThrow(
      'At most 100 names per request',
    );
    const points: number[] = [];
    const budget = {
      consume: async (_key: string, spent: number) => {
        points.push(spent);
        return { allowed: true, limit: 100, remaining: 90, resetSeconds: 60 };
      },
    } as unknown as LiveUpdatesDeps['budget'];
    const admitted = await hub(new MemoryLog(), { budget }).admit(request(), { names: ['a@me', 'A@ME', 'b@me'] });
    expect(points).toEqual([2]);
    expect(admitted.names).toEqual(['a@me', 'b@me']);
    await hub(new MemoryLog(), { budget }).admit(request(), { namespace: 'me' });
    expect(points).toEqual([2, 1]);
  });

  it('takes a slot only when an admission is opened, and refuses the 21st open one of a client', async () => {
    const live = hub();
    const admissions = await Promise.all(Array.from({ length: 25 }, () => live.admit(request(), { names: ['a@me'] })));
    expect(live.stats()).toMatchObject({ open: { sse: 0 }, clients: 0, watchedNames: 0 });
    const sink = { push: () => true, end: () => {} };
    const opened = admissions.slice(0, 20).map((admission) => admission.open('sse', sink));
    expect(live.stats()).toMatchObject({ open: { sse: 20 }, clients: 1, watchedNames: 1 });
    expect(() => admissions[20]?.open('sse', sink)).toThrow(RateLimitedError);
    await expect(live.admit(request(), { names: ['a@me'] })).rejects.toThrow(RateLimitedError);
    for (const subscription of opened) subscription.close();
    expect(live.stats()).toMatchObject({ open: { sse: 0 }, clients: 0, watchedNames: 0 });
    live.close();
  });
});

/** A connection whose unsent bytes the test sets. */
function connection(): StreamConnection & { unsent: number; cut: boolean } {
  const state = {
    transport: 'sse' as const,
    unsent: 0,
    cut: false,
    backlog: () => state.unsent,
    drop: () => {
      state.cut = true;
    },
  };
  return state;
}

const event = (name: string, description = ''): ProfileChangeEvent => ({
  name,
  cursor: encodeChangeCursor({ commitSeq: 1, seq: 1 }),
  profile: { name, description } as unknown as Profile,
});

describe('a GraphQL subscription’s event queue', () => {
  const admitted = async () => {
    const live = hub();
    const names = Array.from({ length: 100 }, (_, index) => `n${index}@me`);
    return { live, admission: await live.admit(request(), { names }), names };
  };

  it('opens its subscription on the first pull, and releases it when the transport stops', async () => {
    const { live, admission } = await admitted();
    const queue = new EventQueue(admission, connection());
    expect(live.stats().open.sse).toBe(0);
    const first = queue.next();
    expect(live.stats().open.sse).toBe(1);
    await queue.return();
    expect(await first).toEqual({ value: undefined, done: true });
    expect(live.stats()).toMatchObject({ open: { sse: 0 }, clients: 0, watchedNames: 0 });
    live.close();
  });

  it('takes a burst of 100 events (one per watched name) and three bursts in a row from a reader that pulls', async () => {
    const { admission, names } = await admitted();
    let now = 0;
    const queue = new EventQueue(admission, connection(), () => now);
    void queue.next().then(() => {}); // the transport waits for the first event
    for (let burst = 1; burst <= 3; burst += 1) {
      now += 1000;
      // The transport pulls once before the burst is over; the rest waits in the queue.
      expect(names.every((name) => queue.push(event(name, `burst ${burst}`)))).toBe(true);
    }
    // Each name's newest event replaced its older queued one: 99 queued (one was taken at once).
    const received: ProfileChangeEvent[] = [];
    for (let index = 0; index < 99; index += 1) {
      const { value } = await queue.next();
      if (value !== undefined) received.push(value);
    }
    expect(new Set(received.map((item) => item.name)).size).toBe(99);
    expect(received.every((item) => item.profile?.description === 'burst 3')).toBe(true);
  });

  it('refuses a push (the hub drops the reader) once the connection holds more than 1 MiB unsent', async () => {
    const { admission } = await admitted();
    const wire = connection();
    const queue = new EventQueue(admission, wire);
    void queue.next();
    expect(queue.push(event('n1@me'))).toBe(true);
    wire.unsent = MAX_BACKLOG_BYTES + 1;
    expect(queue.push(event('n2@me'))).toBe(false);
  });

  it('refuses a push when events have waited and the transport has not pulled for MAX_UNREAD_MS', async () => {
    const { admission } = await admitted();
    let now = 0;
    const queue = new EventQueue(admission, connection(), () => now);
    void queue.next();
    expect(queue.push(event('n1@me', 'a'))).toBe(true); // taken by the waiting pull
    expect(queue.push(event('n2@me', 'a'))).toBe(true); // queued: the transport is writing
    now += MAX_UNREAD_MS - 1;
    expect(queue.push(event('n3@me', 'a'))).toBe(true);
    now += 2;
    expect(queue.push(event('n4@me', 'a'))).toBe(false);
  });
});
