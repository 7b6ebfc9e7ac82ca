/**
 * bench/README.md shows today's figures as the result files beside it have them: every table is
 * what `npm run bench:readme` renders from bench/results, and the page stays short (the rounds of
 * earlier days are in bench/HISTORY.md).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { figureTables, withFigures } from '../bench/readme-figures.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(path.join(ROOT, 'bench', 'README.md'), 'utf8');
const MAX_LINES = 300;

describe('bench/README.md', () => {
  it('shows exactly the figures npm run bench:readme renders from bench/results', () => {
    expect(README).toBe(withFigures(README, figureTables()));
  });

  it('has a table for every benchmark with results, each figure beside its target and verdict', () => {
    const tables = figureTables();
    expect(tables.map((table) => table.name)).toEqual([
      'service-100000',
      'service-1000000',
      'change-log',
      'import',
      'soak',
      'outage',
      'webhooks',
    ]);
    for (const table of tables) {
      expect(table.rows.length, table.name).toBeGreaterThan(0);
      for (const row of table.rows) expect(['met', 'missed', 'reported'], row.label).toContain(row.verdict);
    }
  });

  it(`stays at most ${MAX_LINES} lines: how to run each benchmark and today's figures`, () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(MAX_LINES);
  });

  it('a table that no longer matches its results is found, and a missing marker said', () => {
    const changed = README.replace(/\| met( *)\|/, '| missed|');
    expect(changed).not.toBe(README);
    expect(withFigures(changed, figureTables())).toBe(README);
    expect(() => withFigures('# no markers', figureTables())).toThrow(/figures:service-100000/);
  });
});
