/** `npm run import`: the command of ./commands/import.ts, run as this process. */
import { runAsProcess } from './command.js';
import { importCommand } from './commands/import.js';

runAsProcess(importCommand);
