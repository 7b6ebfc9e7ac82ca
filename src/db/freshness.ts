/**
 * What this process has heard of the primary's changes, so that reads on replicas never go back
 * in time: once a change notification is heard, no read may come from a replica that has not
 * replayed that change's commit.
 *
 * A change is heard when its notification arrives (PostgreSQL delivers it after the commit). Its
 * commit's WAL position is not known then — a transaction cannot know it before it commits — so
 * the change is pending, and every read goes to the primary, until a position known to cover the
 * commit arrives. Two things bring one:
 * - the writer's own notification after its commit (the importer sends
 *   `{"committed": <id>, "lsn": <position>}` for the change it announced with that id);
 * - the first heartbeat sent after the change was heard: the heartbeat reads the primary's WAL
 *   insert position when it runs, and the change had committed before we heard it, so before the
 *   heartbeat ran. This covers writers that send no position (a hand-written
 *   `pg_notify(..., '*')`) and a writer that died between its commit and its second notification.
 * The newest such position is the watermark: a replica is read only once it has replayed it.
 */
import { laterOf, WAL_START, type WalPosition } from './wal-position.js';

/** Named changes kept waiting for their writer's position; past it they wait for a heartbeat. */
const MAX_NAMED_PENDING = 10_000;

export class Freshness {
  /** Changes heard whose writer will send its position: id → when heard (ms). */
  readonly #named = new Map<string, number>();
  /** When the newest change that only a heartbeat can settle was heard. */
  #unnamedHeardAt: number | undefined;
  #watermark: WalPosition = WAL_START;

  /** A change notification was heard at `at`; `id` when its writer will send its position. */
  heard(id: string | undefined, at: number): void {
    if (id === undefined || this.#named.size >= MAX_NAMED_PENDING) this.#unnamedHeardAt = at;
    else this.#named.set(id, at);
  }

  /** The writer of change `id` says its commit ends at or before `position`. */
  committed(id: string, position: WalPosition): void {
    this.#watermark = laterOf(this.#watermark, position);
    this.#named.delete(id);
  }

  /** A heartbeat sent at `sentAt` read the primary's WAL insert position `position`. */
  heartbeat(sentAt: number, position: WalPosition): void {
    let settled = false;
    for (const [id, heardAt] of this.#named) {
      if (heardAt < sentAt) {
        this.#named.delete(id);
        settled = true;
      }
    }
    if (this.#unnamedHeardAt !== undefined && this.#unnamedHeardAt < sentAt) {
      this.#unnamedHeardAt = undefined;
      settled = true;
    }
    if (settled) this.#watermark = laterOf(this.#watermark, position);
  }

  /**
   * The position a replica must have replayed to be read; undefined while a change heard has no
   * known position yet (read the primary).
   */
  requiredPosition(): WalPosition | undefined {
    return this.#named.size > 0 || this.#unnamedHeardAt !== undefined ? undefined : this.#watermark;
  }
}
