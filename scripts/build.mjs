/**
 * `npm run build`: compiles src/ to JavaScript in dist/ (tsconfig.build.json, with source maps).
 * With `--if-stale` (what `npm start` runs first) it builds only when dist/ is missing or older
 * than anything under src/ or package.json or a tsconfig, so `npm install && npm start` needs no
 * separate build step and a fresh dist/ costs a start nothing but a walk of src/.
 *
 * Plain JavaScript, so that it runs before anything is compiled. Messages and compiler output go
 * to stderr: the service's stdout is its JSON log.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = path.join(ROOT, 'dist');
/** Written after a successful build, with the time the build started as its mtime. */
const STAMP = path.join(DIST, '.build-stamp');
const INPUTS = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'].map((name) => path.join(ROOT, name));

/** The newest mtime under `entry`; a folder's own mtime counts, so a deleted file does too. */
function newestChange(entry) {
  const stat = statSync(entry);
  let newest = stat.mtimeMs;
  if (stat.isDirectory()) {
    for (const name of readdirSync(entry)) newest = Math.max(newest, newestChange(path.join(entry, name)));
  }
  return newest;
}

/** Why dist/ needs a build, or undefined when it is up to date. */
function staleness() {
  let built;
  try {
    built = statSync(STAMP).mtimeMs;
  } catch {
    return 'dist/ has not been built';
  }
  const changed = INPUTS.find((input) => newestChange(input) > built);
  return changed === undefined ? undefined : `${path.relative(ROOT, changed)} changed since the last build`;
}

function typescriptCompiler() {
  try {
    const manifest = createRequire(import.meta.url).resolve('typescript/package.json');
    return path.join(path.dirname(manifest), 'bin', 'tsc');
  } catch {
    throw new Error('TypeScript is not installed: run `npm install` (with dev dependencies) to build dist/');
  }
}

function build(reason) {
  process.stderr.write(`building dist/ (${reason})\n`);
  const compiler = typescriptCompiler();
  const started = new Date();
  // From scratch, so a module deleted from src/ does not live on in dist/.
  rmSync(DIST, { recursive: true, force: true });
  const tsc = spawnSync(process.execPath, [compiler, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: ['ignore', 2, 2],
  });
  if (tsc.status !== 0) throw new Error(`the TypeScript build failed (tsc exited with ${tsc.status ?? tsc.signal})`);
  writeFileSync(STAMP, '');
  // A source saved while tsc ran is newer than this and makes the next start build again.
  utimesSync(STAMP, started, started);
}

try {
  const reason = process.argv.includes('--if-stale') ? staleness() : 'npm run build';
  if (reason !== undefined) build(reason);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
