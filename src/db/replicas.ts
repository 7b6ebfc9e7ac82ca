/**
 * Reads on PostgreSQL streaming replicas (DATABASE_REPLICA_URLS), the primary otherwise.
 *
 * Every PROBE_INTERVAL_MS each replica is asked how far it has replayed the primary's WAL, and
 * the primary where its WAL is now; a replica is read from while it answers, is a standby, lags
 * at most REPLICA_MAX_LAG_MS, and has replayed every change this process has heard of
 * (./freshness.ts). Its lag is how long ago the primary was at the position the replica has
 * replayed: the time of the oldest position sample the replica has not reached yet (0 when it has
 * reached them all), so an idle primary does not make an idle replica look behind.
 *
 * A read tries the replicas in use in turn (round robin), then the primary: a replica that fails
 * with an unavailability error (refused, lost, no answer within REPLICA_READ_DEADLINE_MS) is out
 * of use until a probe finds it well again, and the read moves on, so a replica fault costs a
 * client no error. Errors of the query itself are not retried elsewhere.
 */
import type { Logger } from 'pino';
import type postgres from 'postgres';
import { describeFailure } from '../errors/cause-chain.js';
import { isDatabaseUnavailable } from './driver-errors.js';
import type { Freshness } from './freshness.js';
import { withDeadline } from './postgres-deadlines.js';
import type { Database, Read } from './schema.js';
import { parseWalPosition, type WalPosition } from './wal-position.js';

const PROBE_INTERVAL_MS = 500;
/** A probe that takes longer counts as a failure. */
const PROBE_DEADLINE_MS = 1000;
/** A read on a replica gives up after this and goes on to the next server. */
const REPLICA_READ_DEADLINE_MS = 2000;

interface ReplicaServer {
  /** For logs, metrics and /readyz: host, port and database, no credentials. */
  label: string;
  sql: postgres.Sql;
  db: Database;
  end(): Promise<void>;
}

interface PrimaryServer {
  sql: postgres.Sql;
  /** Runs a read on the primary under its deadline and outage gate. */
  read<T>(work: Read<T>): Promise<T>;
}

type ReplicaState =
  | { inUse: true; reason: 'in use' }
  | { inUse: false; reason: 'not probed yet' | 'unreachable' | 'not a standby' | 'lagging' | 'replaying a change' };

export interface ReplicaStatus {
  replica: string;
  inUse: boolean;
  reason: ReplicaState['reason'];
  /** Milliseconds behind the primary; null while unknown. */
  lagMs: number | null;
  /** Reads answered by this replica since start. */
  reads: number;
  /** Why it is unreachable, when it is (driver code and message). */
  error?: string;
}

interface PositionSample {
  at: number;
  position: WalPosition;
}

class Replica {
  up = false;
  standby = false;
  replayed: WalPosition | undefined;
  lagMs: number | null = null;
  reads = 0;
  error: string | undefined;
  probing = false;
  /** The state last logged, so transitions are logged once. */
  logged: ReplicaState['reason'] = 'not probed yet';

  constructor(readonly server: ReplicaServer) {}

  state(required: WalPosition | undefined, maxLagMs: number, probed: boolean): ReplicaState {
    if (!probed) return { inUse: false, reason: 'not probed yet' };
    if (!this.up) return { inUse: false, reason: 'unreachable' };
    if (!this.standby || this.replayed === undefined) return { inUse: false, reason: 'not a standby' };
    if (this.lagMs === null || this.lagMs > maxLagMs) return { inUse: false, reason: 'lagging' };
    if (required === undefined || this.replayed < required) return { inUse: false, reason: 'replaying a change' };
    return { inUse: true, reason: 'in use' };
  }
}

export interface ReplicaSetOptions {
  primary: PrimaryServer;
  replicas: readonly ReplicaServer[];
  /** What this process has heard of changes; undefined when it listens to none (no profile cache). */
  freshness: Freshness | undefined;
  maxLagMs: number;
  log: Logger | undefined;
  now?: () => number;
}

export class ReplicaSet {
  readonly #replicas: Replica[];
  readonly #samples: PositionSample[] = [];
  readonly #options: ReplicaSetOptions;
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout;
  #next = 0;
  #probed = false;
  #sampling = false;
  #primaryReads = 0;

  constructor(options: ReplicaSetOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#replicas = options.replicas.map((server) => new Replica(server));
    this.#timer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
    this.#timer.unref();
  }

  /**
   * Samples the primary's position, then probes every replica once; resolves when all answered or
   * gave up. The primary first, so a replica's lag is measured against a position taken before.
   */
  async probe(): Promise<void> {
    await this.#samplePrimary();
    await Promise.all(this.#replicas.map((replica) => this.#probe(replica)));
    this.#probed = true;
    for (const replica of this.#replicas) this.#logTransition(replica);
  }

  /** `work` on a replica in use, else on the primary. */
  async read<T>(work: Read<T>): Promise<T> {
    const required = this.#requiredPosition();
    const count = this.#replicas.length;
    const start = this.#next;
    this.#next = (this.#next + 1) % Math.max(count, 1);
    for (let offset = 0; offset < count; offset += 1) {
      const replica = this.#replicas[(start + offset) % count] as Replica;
      if (!replica.state(required, this.#options.maxLagMs, this.#probed).inUse) continue;
      try {
        const result = await withDeadline(() => work(replica.server.db), REPLICA_READ_DEADLINE_MS);
        replica.reads += 1;
        return result;
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
        this.#markDown(replica, error);
      }
    }
    this.#primaryReads += 1;
    return this.#options.primary.read(work);
  }

  status(): ReplicaStatus[] {
    const required = this.#requiredPosition();
    return this.#replicas.map((replica) => {
      const state = replica.state(required, this.#options.maxLagMs, this.#probed);
      return {
        replica: replica.server.label,
        inUse: state.inUse,
        reason: state.reason,
        lagMs: replica.lagMs,
        reads: replica.reads,
        ...(replica.error === undefined ? {} : { error: replica.error }),
      };
    });
  }

  /** Reads the primary answered because no replica was in use. */
  get primaryReads(): number {
    return this.#primaryReads;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.all(this.#replicas.map((replica) => replica.server.end()));
  }

  #requiredPosition(): WalPosition | undefined {
    const { freshness } = this.#options;
    // Without a change feed nothing is heard, so any replica within the lag bound will do.
    return freshness === undefined ? 0n : freshness.requiredPosition();
  }

  async #samplePrimary(): Promise<void> {
    if (this.#sampling) return;
    this.#sampling = true;
    try {
      const [row] = await withDeadline(
        () => this.#options.primary.sql<{ position: string }[]>`select pg_current_wal_insert_lsn()::text as position`,
        PROBE_DEADLINE_MS,
      );
      const position = parseWalPosition(row?.position);
      if (position !== undefined) this.#remember({ at: this.#now(), position });
    } catch {
      // The primary's own troubles show in its reads and in readiness; lags stay as they were.
    } finally {
      this.#sampling = false;
    }
  }

  /** Keeps the samples that can tell a lag up to twice the bound (and at least 10 s). */
  #remember(sample: PositionSample): void {
    this.#samples.push(sample);
    const horizon = sample.at - Math.max(2 * this.#options.maxLagMs, 10_000);
    while (this.#samples.length > 2 && (this.#samples[1]?.at ?? 0) < horizon) this.#samples.shift();
  }

  async #probe(replica: Replica): Promise<void> {
    if (replica.probing) return;
    replica.probing = true;
    try {
      const [row] = await withDeadline(
        () =>
          replica.server.sql<{ standby: boolean; replayed: string | null }[]>`
            select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replayed`,
        PROBE_DEADLINE_MS,
      );
      replica.up = true;
      replica.error = undefined;
      replica.standby = row?.standby === true;
      replica.replayed = parseWalPosition(row?.replayed);
      replica.lagMs = replica.replayed === undefined ? null : this.#lagOf(replica.replayed);
    } catch (error) {
      this.#markDown(replica, error);
    } finally {
      replica.probing = false;
    }
  }

  /** How long ago the primary was at `replayed`: 0 when the replica has every sampled position. */
  #lagOf(replayed: WalPosition): number | null {
    const behind = this.#samples.find((sample) => sample.position > replayed);
    if (behind !== undefined) return this.#now() - behind.at;
    return this.#samples.length === 0 ? null : 0;
  }

  #markDown(replica: Replica, error: unknown): void {
    replica.up = false;
    replica.error = describeFailure(error);
    this.#logTransition(replica);
  }

  /** Out of use and back in use are logged once each; catching up with a change is routine, and not logged. */
  #logTransition(replica: Replica): void {
    const { reason } = replica.state(0n, this.#options.maxLagMs, this.#probed);
    if (reason === replica.logged) return;
    replica.logged = reason;
    const fields = { replica: replica.server.label, reason, lagMs: replica.lagMs, error: replica.error };
    if (reason === 'in use') this.#options.log?.info(fields, 'replica in use');
    else this.#options.log?.warn(fields, 'replica out of use: reads go to other replicas or the primary');
  }
}
