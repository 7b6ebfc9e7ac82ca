/** `npm run schema`: the command of ./commands/print-schema.ts, run as this process. */
import { runAsProcess } from './command.js';
import { printSchemaCommand } from './commands/print-schema.js';

runAsProcess(printSchemaCommand);
