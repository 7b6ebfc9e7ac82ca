/**
 * A database outage while lookups keep coming, as operators cause one: `ALTER DATABASE ...
 * ALLOW_CONNECTIONS false` and every session of the database terminated, for a while, then
 * connections allowed again; meanwhile clients keep asking service processes for profiles no
 * cache holds. Used by test/database-outage-load.test.ts and `npm run bench:outage`.
 */
import type postgres from 'postgres';
import type { ServerProcess } from './server-process.js';

export interface Answer {
  /** Which service process answered (index into the services given). */
  instance: number;
  sentAt: number;
  answeredAt: number;
  status: number;
}

/** Clients asking for names nobody has, in turn over the services: a 404 is a read that succeeded. */
export class LookupLoad {
  readonly answers: Answer[] = [];
  private running = true;
  private next = 0;
  private readonly clients: Promise<void>[];

  constructor(
    private readonly services: readonly ServerProcess[],
    clients: number,
  ) {
    this.clients = Array.from({ length: clients }, (_, index) => this.client(index % services.length));
  }

  private async client(instance: number): Promise<void> {
    const base = this.services[instance]?.url;
    while (this.running) {
      const sentAt = performance.now();
      this.next += 1;
      const response = await fetch(`${base}/api/nobody${this.next % 10_000}@me`, {
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      this.answers.push({ instance, sentAt, answeredAt: performance.now(), status: response.status });
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.clients);
  }
}

/** How one service process came back after an outage. */
export interface Recovery {
  instance: number;
  /** From the database accepting connections again to the first successful lookup answered. */
  firstSuccessMs: number | undefined;
  /** Lookups answered 503 this long or longer after it: none are allowed from 2 s on. */
  lateUnavailable: number;
}

/**
 * The outage on `database` (a name from createTestDatabase: nps_test_<hex>, or the benchmark's
 * own): refuses connections and terminates sessions, sweeping again until `outageMs` have passed
 * (a session that passed the check just before the change would live on), then allows them.
 * Resolves with the time connections are allowed again.
 */
export async function causeOutage(admin: postgres.Sql, database: string, outageMs: number): Promise<number> {
  await admin.unsafe(`alter database "${database}" allow_connections false`);
  const endAt = performance.now() + outageMs;
  while (performance.now() < endAt) {
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${database}`;
  }
  await admin.unsafe(`alter database "${database}" allow_connections true`);
  return performance.now();
}

/** Per service process, how the answers from `backAt` on came. */
export function recoveries(
  answers: readonly Answer[],
  backAt: number,
  instances: number,
  lateFromMs: number,
): Recovery[] {
  const after = answers.filter((answer) => answer.answeredAt >= backAt);
  return Array.from({ length: instances }, (_, instance) => {
    const mine = after.filter((answer) => answer.instance === instance);
    const firstSuccess = mine.find((answer) => answer.status === 404);
    return {
      instance,
      firstSuccessMs: firstSuccess === undefined ? undefined : firstSuccess.answeredAt - backAt,
      lateUnavailable: mine.filter((answer) => answer.status === 503 && answer.answeredAt - backAt >= lateFromMs)
        .length,
    };
  });
}
