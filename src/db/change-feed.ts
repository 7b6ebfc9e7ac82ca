/**
 * The listening side of change notifications (./change-notifications.ts): tells a server which
 * profiles changed, and whether it can vouch for having heard of every change.
 *
 * PostgreSQL: a client of its own LISTENs (postgres.js's `listen`, which listens again after a
 * reconnect, but gives up when that first attempt fails: then the feed replaces the client).
 * Notifications sent while the connection was gone are lost, so every LISTEN after the first
 * makes the feed lost (its listeners drop what they cached) until a heartbeat is heard again.
 * A lost connection says nothing, and a silent one (a network black hole) says nothing either,
 * so the feed proves itself: every HEARTBEAT_INTERVAL_MS it sends a heartbeat notification and
 * waits to hear it back. PostgreSQL delivers notifications in commit order, so hearing a
 * heartbeat sent at time t means every change committed before t has been heard too. The feed
 * is live only while the newest heartbeat heard was sent at most MAX_SILENCE_MS ago; a listener
 * that serves from a cache only while the feed is live is never more than about that much
 * behind the database.
 *
 * Heartbeats go through the listening client (a second connection of its own, on the same link
 * as the LISTEN), not through the request path's pool: whether the feed hears every change
 * depends on the LISTEN link alone, so a pool that stalls (a hung pooler, every connection stuck)
 * must not make the feed lost. The cache then keeps answering what it holds while reads of the
 * database fail at their deadline (docs/database-outages.md, "A stall").
 *
 * The heartbeat also reads the primary's WAL insert position, and the feed tells ./freshness.ts
 * what it hears: changes, the positions their writers send after committing, and heartbeats, so
 * that reads on replicas never go back past a change this process has heard of.
 *
 * PGlite: every writer is this process, so a LISTEN on the one connection hears every change,
 * and the feed is live from the start.
 */
import { randomUUID } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import type postgres from 'postgres';
import {
  type ApiKeyChange,
  type ChangeNotification,
  PROFILE_CHANGES_CHANNEL,
  type ProfileChange,
  parseChangePayload,
} from './change-notifications.js';
import type { Freshness } from './freshness.js';
import { parseWalPosition } from './wal-position.js';

/** How often a PostgreSQL feed proves that it still hears notifications. */
const HEARTBEAT_INTERVAL_MS = 250;
/** The feed counts as lost when the newest heartbeat heard was sent longer ago than this. */
export const MAX_SILENCE_MS = 1000;

const HEARTBEAT_PREFIX = 'heartbeat:';

export interface ChangeFeedHandlers {
  /** Profiles changed (only called while the feed is live). */
  onChange(change: ProfileChange): void;
  /** An API key was created or revoked (only called while the feed is live). */
  onApiKeyChange?(change: ApiKeyChange): void;
  /** The feed can vouch for every change from now on; whatever was missed before is unknown. */
  onLive(): void;
  /** The feed can no longer vouch for hearing every change. */
  onLost(reason: string): void;
}

export interface ChangeFeed {
  readonly live: boolean;
  close(): Promise<void>;
}

/** Tracks whether the feed is live and tells the handlers on every transition. */
class Liveness {
  live = false;

  constructor(private readonly handlers: ChangeFeedHandlers) {}

  up(): void {
    if (this.live) return;
    this.live = true;
    this.handlers.onLive();
  }

  down(reason: string): void {
    if (!this.live) return;
    this.live = false;
    this.handlers.onLost(reason);
  }
}

export interface PostgresFeedOptions {
  /**
   * A new client for the LISTEN (postgres.js opens one connection of its own for it) and for the
   * heartbeats (the client's own connection), on the same link.
   */
  connectListener: () => postgres.Sql;
  /** Told of every change, committed position and heartbeat heard (replica reads). */
  freshness?: Freshness;
  heartbeatIntervalMs?: number;
  maxSilenceMs?: number;
  now?: () => number;
}

export async function listenToPostgres(
  options: PostgresFeedOptions,
  handlers: ChangeFeedHandlers,
): Promise<ChangeFeed> {
  const { connectListener } = options;
  const intervalMs = options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS;
  const maxSilenceMs = options.maxSilenceMs ?? MAX_SILENCE_MS;
  const now = options.now ?? Date.now;
  const liveness = new Liveness(handlers);
  // Each feed sends its heartbeats on a channel of its own: on the shared channel, every process
  // would wake for every other process's heartbeats, four a second each, which grows with the
  // square of the number of processes. PostgreSQL delivers all notifications, whatever their
  // channel, in commit order to each listener, so hearing one's own heartbeat still proves every
  // earlier change was heard.
  const feedId = randomUUID();
  const heartbeatChannel = `nps_heartbeat_${feedId.replaceAll('-', '')}`;
  let newestHeardSentAt = 0;
  let listening = false;
  let closed = false;

  const onNotification = (payload: string) => {
    if (payload.startsWith(HEARTBEAT_PREFIX)) {
      const [id, sentText, positionText] = payload.slice(HEARTBEAT_PREFIX.length).split('@');
      if (id !== feedId) return; // another process's, from a version that used the shared channel
      const sentAt = Number(sentText);
      newestHeardSentAt = Math.max(newestHeardSentAt, sentAt);
      const position = parseWalPosition(positionText);
      if (position !== undefined) options.freshness?.heartbeat(sentAt, position);
      return;
    }
    const notification = parseChangePayload(payload);
    if (notification.kind === 'committed') {
      options.freshness?.committed(notification.id, notification.position);
      return;
    }
    if (notification.kind === 'api-key') {
      if (liveness.live) handlers.onApiKeyChange?.(notification);
      return;
    }
    // Heard, live or not: a replica read must wait for it either way.
    options.freshness?.heard(notification.id, now());
    if (liveness.live) handlers.onChange(notification);
  };

  let listener: postgres.Sql | undefined;
  let listenStartedAt = 0;
  let listens = 0;
  const listen = async () => {
    listenStartedAt = now();
    const previous = listener;
    listener = connectListener();
    await previous?.end({ timeout: 0 });
    try {
      // onlisten runs after every (re)established LISTEN; a change committed while the
      // connection was gone was never heard, hence the heartbeat check before going live.
      await listener.listen(PROFILE_CHANGES_CHANNEL, onNotification, () => {
        listens += 1;
        if (listens > 1) liveness.down('the listening connection was replaced: changes in between were not heard');
        listening = true;
      });
      await listener.listen(heartbeatChannel, onNotification);
    } catch {
      listening = false; // a later tick tries again with a new client
    }
  };

  // Neither waits for the other, and neither is started again while it is still pending: a
  // database that hangs must not pile up heartbeats or LISTEN attempts.
  let heartbeatPending = false;
  let relistening = false;
  const tick = () => {
    if (now() - newestHeardSentAt > maxSilenceMs) liveness.down('no heartbeat heard in time');
    else if (listening) liveness.up();
    if (!heartbeatPending && listener !== undefined) {
      heartbeatPending = true;
      const via = listener;
      // The primary's WAL insert position when the heartbeat runs covers every change heard before it was sent.
      const payload = `${HEARTBEAT_PREFIX}${feedId}@${now()}@`;
      via`select pg_notify(${heartbeatChannel}, ${payload} || pg_current_wal_insert_lsn()::text)`.then(
        () => {
          heartbeatPending = false;
        },
        () => {
          heartbeatPending = false;
          // The link cannot be used: nothing it says can be vouched for, starting now. (A client
          // already replaced fails its last heartbeat when it is ended; that says nothing.)
          if (via === listener) liveness.down('heartbeat failed');
        },
      );
    }
    const silentFor = now() - Math.max(newestHeardSentAt, listenStartedAt);
    if (!liveness.live && silentFor > maxSilenceMs * 2 && !relistening && !closed) {
      relistening = true;
      listening = false;
      void listen().finally(() => {
        relistening = false;
      });
    }
  };

  await listen();
  const timer = setInterval(tick, intervalMs);
  timer.unref();

  return {
    get live() {
      return !closed && liveness.live && now() - newestHeardSentAt <= maxSilenceMs;
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await listener?.end({ timeout: 0 });
    },
  };
}

/** PGlite: this process is the only writer; its own LISTEN hears every change. */
export async function listenToPglite(client: PGlite, handlers: ChangeFeedHandlers): Promise<ChangeFeed> {
  const liveness = new Liveness(handlers);
  const unlisten = await client.listen(PROFILE_CHANGES_CHANNEL, (payload) => {
    dispatch(parseChangePayload(payload), handlers);
  });
  liveness.up();
  return {
    get live() {
      return liveness.live;
    },
    async close() {
      // The database may already be closed (tests close it first); there is nothing to undo then.
      await unlisten().catch(() => {});
    },
  };
}

function dispatch(notification: ChangeNotification, handlers: ChangeFeedHandlers): void {
  if (notification.kind === 'api-key') handlers.onApiKeyChange?.(notification);
  else if (notification.kind !== 'committed') handlers.onChange(notification);
}
