/** `npm run db:migrate`: applies the committed migrations to the configured database. */
import { type Command, commandConfig, databaseLabel, parseArguments, withCommandDatabase } from '../command.js';

const HELP = {
  usage: 'npm run db:migrate',
  details: `
Applies the committed migrations (drizzle/) to the configured database: DATABASE_URL, or the
embedded database in DATA_DIR. Safe to run again and from several processes at once; the
server also does this when it starts.`,
};

export const migrateCommand: Command = {
  help: HELP,
  async main(io) {
    parseArguments(io, { strict: true });
    const config = commandConfig(io);
    // Opening migrates.
    await withCommandDatabase(config, async () => {});
    io.stdout.write(`${databaseLabel(config)} is migrated.\n`);
    return 0;
  },
};
