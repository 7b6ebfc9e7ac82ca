/** `npm run db:migrate`: applies the committed migrations to the configured database. */
import { commandConfig, databaseLabel, openCommandDatabase, runCommand } from './command.js';

runCommand('npm run db:migrate', async () => {
  const config = commandConfig();
  const database = await openCommandDatabase(config);
  await database.close();
  process.stdout.write(`${databaseLabel(config)} is migrated.\n`);
});
