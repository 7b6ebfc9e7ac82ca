/** `npm run keys`: the command of ./commands/keys.ts, run as this process. */
import { runAsProcess } from './command.js';
import { keysCommand } from './commands/keys.js';

runAsProcess(keysCommand);
