/**
 * `npm run db:seed`: writes the demo data into the configured database (idempotent: a second run
 * changes nothing). The embedded database gets it on first start anyway.
 */
import { seedDemoData } from '../../data/seed.js';
import {
  type Command,
  commandConfig,
  databaseLabel,
  formatCount,
  parseArguments,
  withCommandDatabase,
} from '../command.js';

const HELP = {
  usage: 'npm run db:seed',
  details: `
Writes the demo data (3 namespaces, 7 profiles, demo@me as in the API contract's example) into
the configured database: DATABASE_URL, or the embedded database in DATA_DIR. It goes through the
importer, so a second run changes nothing and running servers are told what changed.`,
};

export const seedCommand: Command = {
  help: HELP,
  async main(io) {
    parseArguments(io, { strict: true });
    const config = commandConfig(io);
    await withCommandDatabase(config, async (database) => {
      const report = await seedDemoData(database.db);
      io.stdout.write(
        `Demo data in ${databaseLabel(config).replace(/^The /, 'the ')}: ${formatCount(report.namespaces)} namespaces and ` +
          `${formatCount(report.profiles)} profiles (${formatCount(report.profilesChanged)} new or changed).\n`,
      );
    });
    return 0;
  },
};
