/** `npm run export`: the command of ./commands/export.ts, run as this process. */
import { runAsProcess } from './command.js';
import { exportCommand } from './commands/export.js';

runAsProcess(exportCommand);
