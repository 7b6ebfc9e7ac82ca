/**
 * Webhook deliveries of one service process (docs/webhooks.md). Every process runs one; they
 * share the work through the database (src/db/webhook-queries.ts): a pass queues what the change
 * log has for each endpoint (one process at a time), then claims due events up to this process's
 * free slots and delivers them. A pass runs when a change is heard, when a delivery ends, when the
 * next retry is due, and at least every POLL_MS while there are active endpoints. A delivered
 * event only frees a slot: the pass it starts claims without queueing or counting (the change
 * log has nothing new for it), so one endpoint's slots are filled again at the pace of a claim.
 *
 * Isolation: an endpoint has at most WEBHOOK_CONCURRENCY requests in flight across processes, and
 * claims are made per endpoint, so a slow or dead endpoint holds its own slots and no queue of
 * others'. Deliveries are plain HTTP requests of this process; they never hold a database
 * connection while they wait for a receiver.
 */
import { randomUUID } from 'node:crypto';
import type { WebhookConfig } from '../config/config.js';
import type { Database } from '../db/schema.js';
import {
  type Attempt,
  anyActiveEndpoint,
  type ClaimedEvent,
  claimEvents,
  nextDue,
  pruneDeliveries,
  queueEvents,
  releaseClaim,
  settleDelivered,
  settleFailed,
  waitingEvents,
} from '../db/webhook-queries.js';
import { describeFailure } from '../errors/cause-chain.js';
import type { Logger } from '../logging/logger.js';
import type { Profile } from '../profiles/profile.js';
import { encodeChangeCursor } from '../service/change-cursors.js';
import { retryAfterMs, retryDelayMs } from './retry-schedule.js';
import type { SecretStore } from './secrets.js';
import { signedHeaders } from './signatures.js';

/** A pass runs at least this often while there are active endpoints (retries due, other processes' events). */
const POLL_MS = 1000;
/** Deliveries of this process in flight at most, all endpoints together. */
const MAX_IN_FLIGHT = 256;
/** Change-log entries one queueing pass looks at; passes repeat while there are more. */
const QUEUE_BATCH = 1000;
/** Attempts each endpoint's deliveries log keeps. */
const DELIVERIES_KEPT = 1000;
const PRUNE_EVERY_MS = 10 * 60 * 1000;
/**
 * A claim outlives the delivery's timeout by this much, so that a slow answer is not delivered
 * twice. With a pass every POLL_MS, a killed process's claims are taken by another within
 * WEBHOOK_TIMEOUT_MS + 10 s (the contract): this margin, a poll, and a second for the pass.
 */
const CLAIM_MARGIN_MS = 8000;
/** Without an active endpoint, whether one appeared (made by another process) is asked this often. */
const IDLE_CHECK_MS = 10_000;

const TYPE_OF_KIND: Readonly<Record<number, string>> = {
  1: 'profile.created',
  2: 'profile.updated',
  3: 'profile.removed',
};

/** What became of one attempt, as the deliveries log and the metrics count it. */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'disabled' | 'superseded';

/** What a receiver did with one request (src/webhooks/delivery.ts). */
export interface PostResult {
  /** The HTTP status, null when there was no answer. */
  status: number | null;
  /** Why it failed, in a few words; null for a 2xx. */
  error: string | null;
  /** The answer's Retry-After header, as sent. */
  retryAfter?: string;
}

export type PostDelivery = (
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
) => Promise<PostResult>;

export interface DispatcherObserver {
  delivered(outcome: DeliveryOutcome, seconds: number): void;
}

export interface WebhookDispatcherDeps {
  db: Database;
  config: WebhookConfig;
  secrets: SecretStore;
  post: PostDelivery;
  /** The profiles as the primary has them now, null where there is none. */
  readProfiles(names: readonly string[]): Promise<Array<Profile | null>>;
  logger: Logger;
  observer?: DispatcherObserver;
  /**
   * Called while there are active endpoints: the app starts its change feed then, so that a
   * change wakes the dispatcher at once rather than at its next poll.
   */
  whileActive?: () => void;
  now?: () => number;
}

export class WebhookDispatcher {
  readonly #deps: WebhookDispatcherDeps;
  readonly #token = randomUUID();
  readonly #inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  #currentPass: Promise<void> | undefined;
  #running = false;
  #again = false;
  /** Whether the next pass queues (a change, a poll, a retry due) or only claims (a slot freed). */
  #queueNext = true;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #poll: NodeJS.Timeout | undefined;
  #lastPrune = 0;
  /** Whether an active endpoint was there at the last look, and when that was. */
  #active = true;
  #lastLook = Number.NEGATIVE_INFINITY;
  #waiting = 0;
  #warnedPlain = false;

  constructor(deps: WebhookDispatcherDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#poll = setInterval(() => this.wake(), POLL_MS);
    this.#poll.unref();
    this.wake();
  }

  /**
   * Something may be due now: a change, a new or enabled endpoint, a replay; with `queue` false,
   * only a slot freed by a delivered event.
   */
  wake(endpointsChanged = false, queue = true): void {
    if (this.#closed) return;
    if (endpointsChanged) this.#lastLook = Number.NEGATIVE_INFINITY;
    if (queue) this.#queueNext = true;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#currentPass = this.#pass();
  }

  /** Deliveries in flight in this process now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Events waiting or being delivered, all processes together, as the last pass counted them. */
  get waiting(): number {
    return this.#waiting;
  }

  /**
   * Stops: no new pass; deliveries in flight are abandoned and their events given back at once
   * (another process, or this one after a restart, delivers them again, with the same id).
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#poll);
    clearTimeout(this.#timer);
    await this.#currentPass;
    const flights = [...this.#inFlight.values()];
    for (const flight of flights) flight.controller.abort();
    await Promise.allSettled(flights.map((flight) => flight.done));
  }

  async #pass(): Promise<void> {
    this.#running = true;
    try {
      do {
        this.#again = false;
        const queue = this.#queueNext;
        this.#queueNext = false;
        if (queue && !(await this.#anyEndpoint())) return;
        for (let pass = 0; queue && pass < 20; pass += 1) {
          const queued = await queueEvents(this.#deps.db, QUEUE_BATCH);
          if (queued === undefined || !queued.more) break;
        }
        const ttl = this.#deps.config.timeoutMs + CLAIM_MARGIN_MS;
        const claimed = await claimEvents(
          this.#deps.db,
          this.#token,
          MAX_IN_FLIGHT - this.#inFlight.size,
          this.#deps.config.concurrency,
          ttl,
        );
        for (const event of claimed) this.#start(event);
        if (!queue) continue;
        await this.#scheduleNextDue();
        await this.#pruneNow();
        this.#waiting = await waitingEvents(this.#deps.db);
      } while (this.#again && !this.#closed);
    } catch (error) {
      this.#deps.logger.warn({ reason: describeFailure(error) }, 'webhooks: a pass failed; trying again');
    } finally {
      this.#running = false;
    }
  }

  /** Whether there is an active endpoint, asked at most every IDLE_CHECK_MS while there was none. */
  async #anyEndpoint(): Promise<boolean> {
    if (!this.#active && this.#now() - this.#lastLook < IDLE_CHECK_MS && this.#inFlight.size === 0) return false;
    this.#lastLook = this.#now();
    this.#active = await anyActiveEndpoint(this.#deps.db);
    if (this.#active && !this.#deps.secrets.encrypts && !this.#warnedPlain) {
      this.#warnedPlain = true;
      this.#deps.logger.warn(
        'webhook secrets are stored unencrypted: set WEBHOOK_SECRET_KEY (64 hex digits) on every instance',
      );
    }
    if (this.#active) this.#deps.whileActive?.();
    // Events of disabled endpoints wait too, and the gauge says so while nothing is delivered.
    else this.#waiting = await waitingEvents(this.#deps.db);
    return this.#active || this.#inFlight.size > 0;
  }

  async #scheduleNextDue(): Promise<void> {
    const due = await nextDue(this.#deps.db);
    clearTimeout(this.#timer);
    if (due === undefined) return;
    const waitMs = Math.max(due.getTime() - this.#now(), 0);
    if (waitMs >= POLL_MS) return; // the poll comes first
    this.#timer = setTimeout(() => this.wake(), waitMs);
    this.#timer.unref();
  }

  async #pruneNow(): Promise<void> {
    if (this.#now() - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = this.#now();
    await pruneDeliveries(this.#deps.db, DELIVERIES_KEPT);
  }

  #now(): number {
    return (this.#deps.now ?? Date.now)();
  }

  #start(event: ClaimedEvent): void {
    const controller = new AbortController();
    const done = this.#deliver(event, controller.signal)
      .catch((error: unknown) => {
        this.#deps.logger.warn(
          { endpoint: event.endpointId, event: event.id, reason: describeFailure(error) },
          'webhooks: a delivery could not be settled; its claim will expire',
        );
        return false;
      })
      .then((gone) => {
        this.#inFlight.delete(event.id);
        // A retry to schedule, an endpoint disabled: a whole pass.
        this.wake(false, !gone);
      });
    this.#inFlight.set(event.id, { controller, done });
  }

  /** The body of an event, or undefined when it has nothing to say any more (see below). */
  async #body(event: ClaimedEvent): Promise<string | undefined> {
    const type = TYPE_OF_KIND[event.kind] ?? 'profile.updated';
    const head = `{"type":"${type}","timestamp":"${event.committedAt.toISOString()}","data":{"name":${JSON.stringify(event.name)},"cursor":"${encodeChangeCursor(event.position)}"`;
    if (type === 'profile.removed') return `${head}}}`;
    const [profile] = await this.#deps.readProfiles([event.name]);
    // Removed since: the removal is the name's next event, and this state is gone.
    if (profile === null || profile === undefined) return undefined;
    return `${head},"profile":${profile.document}}}`;
  }

  /** The secrets that sign now: the current one, and the previous one while it still does. */
  #signingSecrets(event: ClaimedEvent): Buffer[] {
    const { secrets } = this.#deps;
    const current = secrets.open(event.secret, event.endpointId);
    const previousValid =
      event.previousSecret !== null &&
      event.previousSecretUntil !== null &&
      event.previousSecretUntil.getTime() > this.#now();
    return previousValid ? [current, secrets.open(event.previousSecret ?? '', event.endpointId)] : [current];
  }

  /** Delivers and settles; true when the event is gone (delivered, or superseded). */
  async #deliver(event: ClaimedEvent, signal: AbortSignal): Promise<boolean> {
    const { db, config, observer } = this.#deps;
    const started = performance.now();
    const body = await this.#body(event);
    if (body === undefined) {
      await settleDelivered(db, event, this.#token, {
        status: null,
        durationMs: 0,
        error: 'superseded: the profile was removed since',
        nextAttemptAt: null,
      });
      observer?.delivered('superseded', 0);
      return true;
    }
    let result: PostResult;
    try {
      const headers = signedHeaders(this.#signingSecrets(event), event.id, Math.floor(this.#now() / 1000), body);
      result = await this.#deps.post(event.url, { ...headers, 'content-type': 'application/json' }, body, signal);
    } catch (error) {
      // Not the receiver's doing (a secret that cannot be read): the same schedule as a failure.
      result = { status: null, error: describeFailure(error) };
    }
    if (signal.aborted && this.#closed) {
      await this.#giveBack(event);
      return false;
    }
    const durationMs = Math.round(performance.now() - started);
    const seconds = durationMs / 1000;
    if (result.status !== null && result.status >= 200 && result.status < 300) {
      await settleDelivered(db, event, this.#token, {
        status: result.status,
        durationMs,
        error: null,
        nextAttemptAt: null,
      });
      observer?.delivered('delivered', seconds);
      return true;
    }
    const gone = result.status === 410;
    const honoured =
      result.status === 429 || result.status === 503
        ? retryAfterMs(result.retryAfter, this.#now(), config.disableAfterMs)
        : undefined;
    const delay = gone ? undefined : retryDelayMs(config.retrySchedule, event.attempt, honoured);
    const retryAt = delay === undefined ? null : new Date(this.#now() + delay);
    const attempt: Attempt = { status: result.status, durationMs, error: result.error, nextAttemptAt: retryAt };
    const disabled = await settleFailed(db, event, this.#token, attempt, {
      retryAt: gone ? null : retryAt,
      disable: gone ? 'the endpoint answered 410 Gone' : null,
      disableAfterMs: config.disableAfterMs,
    });
    observer?.delivered(disabled ? 'disabled' : retryAt === null ? 'failed' : 'retrying', seconds);
    if (disabled)
      this.#deps.logger.warn({ endpoint: event.endpointId, status: result.status }, 'webhook endpoint disabled');
    return false;
  }

  /** An event abandoned at shutdown waits again at once, its attempt not counted. */
  async #giveBack(event: ClaimedEvent): Promise<void> {
    await releaseClaim(this.#deps.db, event, this.#token);
  }
}
