/**
 * WORKERS > 1: this process becomes the primary of a Node cluster. It migrates the database
 * once, forks the workers (each builds its own App and listens on the same port, which the
 * primary hands out round-robin), restarts a worker that dies, and on SIGTERM/SIGINT passes the
 * signal on and waits for every worker to drain.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config/config.js';
import { openConfiguredDatabase } from '../db/open-configured.js';
import type { Logger } from '../logging/logger.js';
import { serveClusterMetrics } from './cluster-metrics.js';

const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 30_000;
/** A worker that ran this long counts as healthy: the next crash restarts it quickly again. */
const STABLE_AFTER_MS = 30_000;
/** Beyond the workers' own drain bound, before they are killed. */
const STOP_GRACE_MS = 5_000;

interface WorkerState {
  startedAt: number;
  listening: boolean;
}

export async function runClusterPrimary(config: Config, logger: Logger): Promise<void> {
  // Once here, so that N workers do not race to migrate (the advisory lock would serialise
  // them anyway) and a failing migration stops start-up once, with one message.
  const database = await openConfiguredDatabase(config, { log: logger });
  await database.close();

  serveClusterMetrics();
  const states = new Map<Worker, WorkerState>();
  let startingUp = true;
  let stopping = false;
  let crashesInARow = 0;

  const fork = () => {
    const worker = cluster.fork();
    states.set(worker, { startedAt: Date.now(), listening: false });
  };

  cluster.on('listening', (worker) => {
    const state = states.get(worker);
    if (state !== undefined) state.listening = true;
    if (startingUp && [...states.values()].every((s) => s.listening)) {
      startingUp = false;
      logger.info({ workers: states.size }, 'all workers listening');
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const state = states.get(worker);
    states.delete(worker);
    if (stopping) {
      logger.info({ workerPid: worker.process.pid, code, signal }, 'worker stopped');
      return;
    }
    logger.error({ workerPid: worker.process.pid, code, signal }, 'worker exited unexpectedly');
    if (startingUp && state?.listening !== true) {
      // A worker that cannot even start (port taken, database refused) will not do better on
      // the next try: stop rather than loop.
      logger.fatal('a worker failed during start-up; stopping');
      void stopWorkers('start-up failure').then(() => process.exit(1));
      return;
    }
    const ranFor = Date.now() - (state?.startedAt ?? Date.now());
    crashesInARow = ranFor >= STABLE_AFTER_MS ? 1 : crashesInARow + 1;
    const delayMs = Math.min(FIRST_RESTART_DELAY_MS * 2 ** (crashesInARow - 1), MAX_RESTART_DELAY_MS);
    logger.warn({ delayMs }, 'restarting worker');
    setTimeout(() => {
      if (!stopping) fork();
    }, delayMs);
  });

  /** Passes SIGTERM to every worker and waits for them; true when all of them exited with 0. */
  const stopWorkers = async (reason: string): Promise<boolean> => {
    stopping = true;
    logger.info({ reason, workers: states.size }, 'stopping workers');
    const exits = [...states.keys()].map(
      (worker) =>
        new Promise<boolean>((resolve) => {
          worker.once('exit', (code) => resolve(code === 0));
          worker.process.kill('SIGTERM');
        }),
    );
    const killer = setTimeout(() => {
      for (const worker of states.keys()) {
        logger.error({ workerPid: worker.process.pid }, 'worker did not stop in time; killing it');
        worker.process.kill('SIGKILL');
      }
    }, config.shutdownTimeoutMs + STOP_GRACE_MS);
    const results = await Promise.all(exits);
    clearTimeout(killer);
    return results.every(Boolean);
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    void stopWorkers(signal).then((clean) => {
      logger.info({ clean }, 'all workers stopped');
      process.exit(clean ? 0 : 1);
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  logger.info({ workers: config.workers }, 'starting workers');
  for (let i = 0; i < config.workers; i += 1) fork();
}
