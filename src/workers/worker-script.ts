/**
 * The module a worker thread runs, next to the module that starts it: `name.js` in dist/,
 * `name.ts` when the service runs from the TypeScript sources. Running from the sources, the
 * worker needs tsx's loader, which it inherits from a process started through tsx (npm run
 * import, npm run dev) but not from one that loads the sources otherwise (Vitest): then it is
 * added.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export function workerScript(startedFrom: string, name: string): { url: URL; execArgv?: string[] } {
  const fromSource = startedFrom.endsWith('.ts');
  const url = new URL(`./${name}${fromSource ? '.ts' : '.js'}`, startedFrom);
  if (!fromSource || process.execArgv.some((arg) => arg.includes('tsx'))) return { url };
  const loader = pathToFileURL(createRequire(startedFrom).resolve('tsx')).href;
  return { url, execArgv: [...process.execArgv, '--import', loader] };
}
