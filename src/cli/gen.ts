/** `npm run gen`: the command of ./commands/gen.ts, run as this process. */
import { runAsProcess } from './command.js';
import { genCommand } from './commands/gen.js';

runAsProcess(genCommand);
