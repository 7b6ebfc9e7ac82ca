/**
 * The module a worker thread or child process runs, next to the module that starts it: `name.js`
 * in dist/, `name.ts` when the service runs from the TypeScript sources. Running from the
 * sources, it needs tsx's loader, which a worker thread inherits from a process started through
 * tsx (npm run import, npm run dev) but not from one that loads the sources otherwise (Vitest):
 * then it is added. A child process is given the loader whenever it runs a source file, and none
 * of the service's own flags (it has its own heap bounds).
 */
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

function scriptUrl(startedFrom: string, name: string): { url: URL; fromSource: boolean } {
  const fromSource = startedFrom.endsWith('.ts');
  return { url: new URL(`./${name}${fromSource ? '.ts' : '.js'}`, startedFrom), fromSource };
}

function tsxLoader(startedFrom: string): string[] {
  return ['--import', pathToFileURL(createRequire(startedFrom).resolve('tsx')).href];
}

export function workerScript(startedFrom: string, name: string): { url: URL; execArgv?: string[] } {
  const { url, fromSource } = scriptUrl(startedFrom, name);
  if (!fromSource || process.execArgv.some((arg) => arg.includes('tsx'))) return { url };
  return { url, execArgv: [...process.execArgv, ...tsxLoader(startedFrom)] };
}

export function childProcessScript(startedFrom: string, name: string): { path: string; execArgv: string[] } {
  const { url, fromSource } = scriptUrl(startedFrom, name);
  return { path: fileURLToPath(url), execArgv: fromSource ? tsxLoader(startedFrom) : [] };
}
