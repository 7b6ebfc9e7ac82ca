/**
 * `npm run bench:graphql-cost:compare -- --base <commit> [--runs 3] [-- <bench:graphql-cost flags>]`:
 * the per-request cost of `npm run bench:graphql-cost`, for another commit and for this checkout,
 * in alternating runs (base, this, this, base, …), so that a change of a few per cent of a
 * request's CPU can be told apart from the machine's drift, which `npm run bench` cannot do
 * (bench/README.md, "Issue 25, third round").
 *
 * The other commit is checked out into a temporary git worktree that uses this checkout's
 * node_modules: its package-lock.json must be this one's (the script refuses otherwise). Each
 * side builds its own dist/. Flags after `--` go to every run, e.g. `-- --only batch100
 * --database-url postgres://postgres@127.0.0.1:5432/nps_bench --no-cache --requests 400`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { asksForHelp } from '../src/cli/command.js';
import { startFlags } from '../test/support/server-process.js';
import type { Figure } from './graphql-cost.js';
import { benchCommandLine, median, usageError, wholeNumberOption } from './support.js';

const USAGE = `
npm run bench:graphql-cost:compare -- --base <commit> [--runs <n>] [-- <bench:graphql-cost flags>]
  --base <commit>   the commit to compare this checkout with (same package-lock.json)
  --runs <n>        alternating runs of each side (default 3)
Flags after -- go to every run of bench:graphql-cost (npm run bench:graphql-cost -- --help).
`;
const { values: flags, positionals: costFlags } = benchCommandLine(
  {
    options: {
      base: { type: 'string' },
      runs: { type: 'string', default: '3' },
    },
    allowPositionals: true,
  },
  USAGE,
);

const checkout = fileURLToPath(new URL('..', import.meta.url));
const git = (...args: string[]) => execFileSync('git', args, { cwd: checkout, encoding: 'utf8' }).trim();

/** A run that failed: said once the worktree is removed (process.exit would skip the `finally`). */
class CompareFailed extends Error {}

/** One run of bench/graphql-cost.ts in `dir`: its figures by scenario. */
function run(dir: string, out: string): Figure[] {
  const result = spawnSync(
    process.execPath,
    [...startFlags(), '--import', 'tsx', 'bench/graphql-cost.ts', ...costFlags, '--json', out],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (result.status !== 0) throw new CompareFailed(`bench/graphql-cost.ts failed in ${dir} (exit ${result.status})`);
  return (JSON.parse(readFileSync(out, 'utf8')) as { figures: Figure[] }).figures;
}

/** `median (min-max)` of one cost over the runs. */
function spread(values: number[]): string {
  return `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`;
}

function main(): void {
  if (asksForHelp(costFlags)) {
    process.stdout.write(`${USAGE.trim()}\n`);
    return;
  }
  if (flags.base === undefined) usageError('--base <commit> is needed', USAGE);
  const runs = wholeNumberOption('--runs', flags.runs, 1, USAGE);
  const commit = git('rev-parse', '--verify', `${flags.base}^{commit}`);
  if (git('diff', commit, '--', 'package-lock.json') !== '') {
    throw new CompareFailed(`${flags.base} has another package-lock.json: its worktree cannot use this node_modules`);
  }
  const temporary = mkdtempSync(path.join(os.tmpdir(), 'nps-cost-compare-'));
  const base = path.join(temporary, 'base');
  git('worktree', 'add', '--detach', base, commit);
  try {
    symlinkSync(path.join(checkout, 'node_modules'), path.join(base, 'node_modules'), 'dir');
    const sides = { base: [] as Figure[][], head: [] as Figure[][] };
    for (let index = 0; index < runs; index += 1) {
      const order = index % 2 === 0 ? (['base', 'head'] as const) : (['head', 'base'] as const);
      for (const side of order) {
        process.stderr.write(`run ${index + 1} of ${runs}: ${side === 'base' ? flags.base : 'this checkout'}\n`);
        sides[side].push(run(side === 'base' ? base : checkout, path.join(temporary, `${side}-${index}.json`)));
      }
    }
    report(flags.base, sides, runs);
  } finally {
    git('worktree', 'remove', '--force', base);
    rmSync(temporary, { recursive: true, force: true });
  }
}

function report(baseName: string, sides: { base: Figure[][]; head: Figure[][] }, runs: number): void {
  const costs = (figures: Figure[][], key: string, pick: (figure: Figure) => number) =>
    figures.flatMap((run) => run.filter((figure) => figure.key === key).map(pick));
  const lines = [
    `µs CPU and KB allocated per request: median (min-max) of ${runs} alternating runs each`,
    '',
    `| request | measure | ${baseName} | this checkout | this / ${baseName} |`,
    '|---|---|---|---|---|',
  ];
  for (const { key, label } of sides.head[0] ?? []) {
    const measures: Array<[string, (figure: Figure) => number]> = [
      ['µs CPU over HTTP', (figure) => figure.http.cpu],
      ['KB over HTTP', (figure) => figure.http.bytes / 1024],
      ['µs CPU in app.handle', (figure) => figure.handle.cpu],
    ];
    for (const [measure, pick] of measures) {
      const before = costs(sides.base, key, pick);
      const after = costs(sides.head, key, pick);
      if (before.length === 0) continue;
      const ratio = median(after) / median(before);
      lines.push(`| ${label} | ${measure} | ${spread(before)} | ${spread(after)} | ${ratio.toFixed(2)}× |`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

try {
  main();
} catch (error) {
  if (!(error instanceof CompareFailed)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = 2;
}
