/**
 * `npm start`: reads the configuration, opens and migrates the database, and serves HTTP until
 * SIGTERM or SIGINT, then drains and exits 0. With WORKERS > 1 this process is the cluster
 * primary (src/ops/cluster-primary.ts) and each worker runs the same code below it.
 */
import cluster from 'node:cluster';
import { createApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config/config.js';
import { seedIfEmpty } from './data/seed.js';
import { listen } from './http/server.js';
import { createLogger } from './logging/logger.js';
import { runClusterPrimary } from './ops/cluster-primary.js';
import { releaseStartUpMemory } from './ops/start-up-memory.js';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config.logLevel);
  if (config.workers > 1 && cluster.isPrimary) {
    releaseStartUpMemory();
    await runClusterPrimary(config, logger);
    return;
  }
  const app = await createApp(config, logger);
  // The embedded database starts out with demo data; a PostgreSQL server only on request (db:seed).
  if (app.database.kind === 'pglite' && (await seedIfEmpty(app.database))) logger.info('seeded the demo data');
  const released = releaseStartUpMemory();
  if (released !== undefined) logger.debug(released, 'released start-up memory');
  const running = await listen(app, config.port, config.host);
  const worker = cluster.worker === undefined ? {} : { worker: cluster.worker.id };
  logger.info({ url: running.url, database: app.database.kind, ...worker }, 'listening');

  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // A worker whose primary is gone (killed) drains and stops instead of serving on alone.
  if (cluster.isWorker) process.on('disconnect', () => stop('primary gone'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Start-up failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
