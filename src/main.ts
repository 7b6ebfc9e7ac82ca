/**
 * `npm start`: reads the configuration, opens and migrates the database, and serves HTTP until
 * SIGTERM or SIGINT.
 */
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { listen } from './http/server.js';
import { createLogger } from './ops/logger.js';

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
  const app = await createApp(config, logger);
  const running = await listen(app, config.port, config.host);
  logger.info({ url: running.url, database: app.database.kind }, 'listening');

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
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
}

main().catch((error: unknown) => {
  process.stderr.write(`Start-up failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
