/** `npm run webhooks`: the command of ./commands/webhooks.ts, run as this process. */
import { runAsProcess } from './command.js';
import { webhooksCommand } from './commands/webhooks.js';

runAsProcess(webhooksCommand);
