/** `npm run db:migrate`: the command of ./commands/migrate.ts, run as this process. */
import { runAsProcess } from './command.js';
import { migrateCommand } from './commands/migrate.js';

runAsProcess(migrateCommand);
