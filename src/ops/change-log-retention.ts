/**
 * The change log's retention (CHANGE_LOG_RETENTION_DAYS) and its figures for /metrics. Every
 * process prunes: soon after it starts, then every PRUNE_INTERVAL_MS with some jitter. Pruning is
 * idempotent (src/db/change-log.ts: oldest transactions first, bounded deletes, each in a
 * transaction of its own, the pruned position moved first), so two processes pruning at once
 * only repeat a little work; it touches old rows only, so it never waits for imports or lookups.
 * The figures are read on a timer, not when Prometheus scrapes, so a scrape never waits for the
 * database.
 */

import { Counter, Gauge, type Registry } from 'prom-client';
import { type LogStats, logStats, pruneLog } from '../db/change-log.js';
import type { Database } from '../db/schema.js';
import { describeFailure } from '../errors/cause-chain.js';
import type { Logger } from '../logging/logger.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** The first pass waits up to this long, so that processes started together do not prune together. */
const FIRST_PRUNE_WITHIN_MS = 60 * 1000;
const STATS_INTERVAL_MS = 60 * 1000;

export interface ChangeLogFigures extends LogStats {
  /** Entries pruned by this process since it started. */
  pruned: number;
}

export class ChangeLogRetention {
  #figures: ChangeLogFigures = { entries: 0, bytes: 0, oldestAt: undefined, pruned: 0 };
  readonly #stop = new AbortController();
  readonly #timers: NodeJS.Timeout[] = [];
  #running: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly retentionDays: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const jitter = () => (0.9 + Math.random() * 0.2) * PRUNE_INTERVAL_MS;
    const schedule = (delayMs: number) => {
      const timer = setTimeout(() => {
        void this.prune().finally(() => {
          if (!this.#stop.signal.aborted) schedule(jitter());
        });
      }, delayMs);
      timer.unref();
      this.#timers.push(timer);
    };
    schedule(Math.random() * FIRST_PRUNE_WITHIN_MS);
    void this.refresh();
    const stats = setInterval(() => void this.refresh(), STATS_INTERVAL_MS);
    stats.unref();
    this.#timers.push(stats);
  }

  figures(): ChangeLogFigures {
    return this.#figures;
  }

  /** One pass: the entries older than the retention are removed. */
  prune(now = Date.now()): Promise<void> {
    this.#running ??= (async () => {
      try {
        const removed = await pruneLog(
          this.db,
          new Date(now - this.retentionDays * DAY_MS),
          undefined,
          this.#stop.signal,
        );
        this.#figures = { ...this.#figures, pruned: this.#figures.pruned + removed };
        if (removed > 0) this.logger.info({ removed, retentionDays: this.retentionDays }, 'change log pruned');
        await this.refresh();
      } catch (error) {
        this.logger.warn({ reason: describeFailure(error) }, 'change log not pruned; trying again later');
      } finally {
        this.#running = undefined;
      }
    })();
    return this.#running;
  }

  async close(): Promise<void> {
    this.#stop.abort();
    for (const timer of this.#timers) clearTimeout(timer);
    await this.#running;
  }

  private async refresh(): Promise<void> {
    try {
      this.#figures = { ...(await logStats(this.db)), pruned: this.#figures.pruned };
    } catch {
      // The figures stay as they were; the database's state is /readyz's to report.
    }
  }
}

/** The change log's figures in /metrics, as the retention job last read them. */
export function registerChangeLogMetrics(registry: Registry, figures: () => ChangeLogFigures): void {
  new Gauge({
    name: 'change_log_entries',
    help: 'Entries in the change log (the planner statistics estimate, refreshed every minute).',
    registers: [registry],
    collect() {
      this.set(figures().entries);
    },
  });
  new Gauge({
    name: 'change_log_bytes',
    help: 'Bytes on disk of the change log, indexes included.',
    registers: [registry],
    collect() {
      this.set(figures().bytes);
    },
  });
  new Gauge({
    name: 'change_log_oldest_entry_timestamp_seconds',
    help: 'When the oldest entry the change log keeps was committed (Unix time); 0 while it is empty.',
    registers: [registry],
    collect() {
      this.set((figures().oldestAt?.getTime() ?? 0) / 1000);
    },
  });
  let counted = 0;
  new Counter({
    name: 'change_log_pruned_entries_total',
    help: 'Change-log entries this process pruned (older than CHANGE_LOG_RETENTION_DAYS).',
    registers: [registry],
    collect() {
      const now = figures().pruned;
      this.inc(Math.max(now - counted, 0));
      counted = Math.max(now, counted);
    },
  });
}
