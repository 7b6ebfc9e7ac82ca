/** `npm run db:seed`: the command of ./commands/seed.ts, run as this process. */
import { runAsProcess } from './command.js';
import { seedCommand } from './commands/seed.js';

runAsProcess(seedCommand);
