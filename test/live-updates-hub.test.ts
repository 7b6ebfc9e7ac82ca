/**
 * The live-updates hub and a GraphQL subscription's event queue, without a server: what the hub
 * logs when the database cannot answer, when a subscription takes its slot, and which readers
 * the queue's bounds drop (a reader that reads never; one that does not read, by its unsent
 * bytes or the time since it last pulled).
 */
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import type { StreamConnection } from '../src/graphql/schema/context.js';
import { EventQueue, MAX_BACKLOG_BYTES, MAX_UNREAD_MS } from '../src/graphql/schema/subscriptions/event-queue.js';
import type { Profile } from '../src/profiles/profile.js';
import { InvalidInputError, RateLimitedError } from '../src/service/errors.js';
import { createLiveUpdates, type LiveUpdatesDeps, type ProfileChangeEvent } from '../src/service/live-updates.js';
import { ServiceRequest } from '../src/service/request.js';
import { until } from './support/live-clients.js';
import { captureLog } from './support/log-capture.js';

const request = (clientKey = '192.0.2.1') => new ServiceRequest(clientKey, 'request-1');
const hub = (deps: Partial<LiveUpdatesDeps> = {}) =>
  createLiveUpdates({
    readProfiles: async (names) => names.map(() => null),
    budget: null,
    logger: captureLog().logger,
    perClient: 20,
    total: 10_000,
    ...deps,
  });
const event = (name: string, description = ''): ProfileChangeEvent => ({
  name,
  profile: { name, description, etag: `"${description}"` } as unknown as Profile,
});
/** A sink that keeps every event pushed to it in `events`. */
const collecting = (events: ProfileChangeEvent[]) => ({
  push: (sent: ProfileChangeEvent) => events.push(sent) > 0,
  end: () => {},
});

describe('the live-updates hub', () => {
  it('logs a failed read with a reason and a code: no SQL, no parameters (profile names), no stack', async () => {
    const log = captureLog('debug');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    let fail = true;
    const live = hub({
      logger: log.logger,
      readProfiles: async (names) => {
        if (fail) {
          fail = false;
          throw new DrizzleQueryError('select "id", "name" from "profiles" where "name" = $1', ['vera@me'], refused);
        }
        return names.map(() => null);
      },
    });
    await live.subscribe(request(), ['vera@me'], 'rest', { push: () => true, end: () => {} });
    await until(() => log.find('warn', 'live updates').length > 0, 5000, 'the warning');
    const [line] = log.find('warn', 'live updates');
    expect(line).toMatchObject({ code: 'ECONNREFUSED', reason: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432' });
    const text = JSON.stringify(log.lines);
    expect(text).not.toMatch(/select|vera|params|stack|\.ts:|\.js:/i);
    live.close();
  });

  it('checks names like profiles(names:): the first invalid name and the indexes of all, one point per distinct name', async () => {
    const live = hub();
    const error = await live.admit(request(), ['a@me', 'bad', 'A@ME', 'worse one']).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).details).toEqual({ name: 'bad', invalidIndexes: [1, 3] });
    await expect(live.admit(request(), [])).rejects.toThrow('At least one name is required');
    await expect(
      live.admit(
        request(),
        Array.from({ length: 101 }, (_, i) => `n${i}@me`),
      ),
    ).rejects.toThrow('At most 100 names per request');
    const points: number[] = [];
    const budget = {
      consume: async (_key: string, spent: number) => {
        points.push(spent);
        return { allowed: true, limit: 100, remaining: 90, resetSeconds: 60 };
      },
    } as unknown as LiveUpdatesDeps['budget'];
    const admitted = await hub({ budget }).admit(request(), ['a@me', 'A@ME', 'b@me']);
    expect(points).toEqual([2]);
    expect(admitted.names).toEqual(['a@me', 'b@me']);
  });

  it('takes a slot only when an admission is opened, and refuses the 21st open one of a client', async () => {
    const live = hub();
    const admissions = await Promise.all(Array.from({ length: 25 }, () => live.admit(request(), ['a@me'])));
    expect(live.stats()).toMatchObject({ open: { sse: 0 }, clients: 0, watchedNames: 0 });
    const sink = { push: () => true, end: () => {} };
    const opened = admissions.slice(0, 20).map((admission) => admission.open('sse', sink));
    expect(live.stats()).toMatchObject({ open: { sse: 20 }, clients: 1, watchedNames: 1 });
    expect(() => admissions[20]?.open('sse', sink)).toThrow(RateLimitedError);
    await expect(live.admit(request(), ['a@me'])).rejects.toThrow(RateLimitedError);
    for (const subscription of opened) subscription.close();
    expect(live.stats()).toMatchObject({ open: { sse: 0 }, clients: 0, watchedNames: 0 });
  });

  it('sends a change announced while a subscriber of a watched name was being admitted to it too, once', async () => {
    let description = 'First';
    const live = hub({
      readProfiles: async (names) => names.map((name) => event(name, description).profile),
    });
    const first: ProfileChangeEvent[] = [];
    const second: ProfileChangeEvent[] = [];
    const opened = [(await live.admit(request(), ['ada@me'])).open('rest', collecting(first))];
    await until(() => live.stats().reads === 2, 5000, 'the read when the first subscription opens');
    // The second subscriber is answered knowing "First"; the change is announced before it opens.
    const admission = await live.admit(request('192.0.2.2'), ['ada@me']);
    description = 'Second';
    live.changed(['ada@me']);
    await until(() => first.length === 1, 5000, 'the change to the first subscriber');
    opened.push(admission.open('rest', collecting(second)));
    await until(() => second.length === 1, 5000, 'the change to the second subscriber');
    await until(() => live.stats().reads === 4, 5000, 'the read for the second subscriber');
    await new Promise((resolve) => setImmediate(resolve));
    expect(first.map((sent) => sent.profile?.description)).toEqual(['Second']);
    expect(second.map((sent) => sent.profile?.description)).toEqual(['Second']);
    for (const subscription of opened) subscription.close();
    live.close();
  });

  it('sends one event per change, also when the change is heard again or was read already', async () => {
    let description = 'First';
    const live = hub({
      readProfiles: async (names) => names.map((name) => event(name, description).profile),
    });
    const events: ProfileChangeEvent[] = [];
    const opened = (await live.admit(request(), ['ada@me'])).open('rest', collecting(events));
    const reads = () => live.stats().reads;
    await until(() => reads() === 2, 5000, 'the read when the subscription opens');
    description = 'Second';
    live.changed(['ada@me']);
    await until(() => events.length === 1, 5000, 'the change as an event');
    // The same change heard twice (a notification repeated, or one that came while a check had
    // already read the change): read again, but nothing new to send.
    live.changed(['ada@me']);
    await until(() => reads() === 4, 5000, 'the second read');
    description = 'Third';
    live.changed(['ada@me']);
    await until(() => events.length === 2, 5000, 'the next change');
    expect(events.map((sent) => sent.profile?.description)).toEqual(['Second', 'Third']);
    opened.close();
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

describe('a GraphQL subscription’s event queue', () => {
  const admitted = async () => {
    const live = hub();
    const names = Array.from({ length: 100 }, (_, index) => `n${index}@me`);
    return { live, admission: await live.admit(request(), names), names };
  };

  it('sends a change committed after the admission while the change feed was not live (no notification)', async () => {
    // The profile as the database holds it; a change the feed did not deliver is only a new value.
    let description = 'First';
    const reads: number[] = [];
    const live = hub({
      readProfiles: async (names) => {
        reads.push(names.length);
        return names.map((name) => event(name, description).profile);
      },
    });
    const admission = await live.admit(request(), ['ada@me']);
    // Committed between the answer and the subscription's first read, while nothing was heard.
    description = 'Second';
    const events: ProfileChangeEvent[] = [];
    const opened = admission.open('rest', collecting(events));
    await until(() => events.length === 1, 5000, 'the change as an event');
    expect(events[0]?.profile).toMatchObject({ description: 'Second' });
    // The feed, live again, says everything may have changed: nothing new, so nothing is sent.
    live.everythingMayHaveChanged();
    await until(() => reads.length === 3, 5000, 'the check after the feed is live');
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toHaveLength(1);
    opened.close();
    live.close();
  });

  it('opens its subscription on the first pull, and releases it when the transport stops', async () => {
    const { live, admission } = await admitted();
    const queue = new EventQueue(admission, connection());
    expect(live.stats().open.sse).toBe(0);
    const first = queue.next();
    expect(live.stats().open.sse).toBe(1);
    await queue.return();
    expect(await first).toEqual({ value: undefined, done: true });
    expect(live.stats()).toMatchObject({ open: { sse: 0 }, clients: 0, watchedNames: 0 });
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
