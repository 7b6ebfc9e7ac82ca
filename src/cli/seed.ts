/**
 * `npm run db:seed`: writes the demo data into the configured database (idempotent: a second run
 * changes nothing). The embedded database gets it on first start anyway.
 */
import { seedDemoData } from '../data/seed.js';
import { commandConfig, databaseLabel, formatCount, openCommandDatabase, runCommand } from './command.js';

runCommand('npm run db:seed', async () => {
  const config = commandConfig();
  const database = await openCommandDatabase(config);
  try {
    const report = await seedDemoData(database.db);
    process.stdout.write(
      `Demo data in ${databaseLabel(config).replace(/^The /, 'the ')}: ${formatCount(report.namespaces)} namespaces and ` +
        `${formatCount(report.profiles)} profiles (${formatCount(report.profilesChanged)} new or changed).\n`,
    );
  } finally {
    await database.close();
  }
});
