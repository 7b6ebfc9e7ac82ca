/**
 * The collection the service runs before it listens (src/ops/start-up-memory.ts) gives memory
 * back: after start-up-like garbage, the young generation shrinks and the resident set falls.
 * Run in a child process with `--expose-gc`, as `npm start` runs the service.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { releaseStartUpMemory } from '../src/ops/start-up-memory.js';

const CHILD = `
import v8 from 'node:v8';
import { releaseStartUpMemory } from './src/ops/start-up-memory.ts';
// Start-up-like garbage: many short-lived objects, some of which survive a while.
let keep = [];
for (let i = 0; i < 400_000; i += 1) {
  keep.push({ i, text: 'x'.repeat(64) + i });
  if (keep.length > 50_000) keep = [];
}
keep = [];
const youngBefore = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').physical_space_size;
const released = releaseStartUpMemory();
const youngAfter = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').physical_space_size;
process.stdout.write(JSON.stringify({ released, youngBefore, youngAfter }));
`;

describe('releasing start-up memory', () => {
  it('shrinks the young generation and the resident set when gc is exposed', () => {
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', '--max-semi-space-size=16', '--import', 'tsx', '--input-type=module', '-e', CHILD],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(child.stderr).toBe('');
    const { released, youngBefore, youngAfter } = JSON.parse(child.stdout) as {
      released: { rssBeforeMb: number; rssAfterMb: number; tookMs: number };
      youngBefore: number;
      youngAfter: number;
    };
    expect(youngBefore).toBeGreaterThan(8e6);
    expect(youngAfter).toBeLessThan(youngBefore / 4);
    expect(released.rssAfterMb).toBeLessThan(released.rssBeforeMb - 5);
  });

  it('does nothing without an exposed gc', () => {
    expect('gc' in globalThis).toBe(false);
    expect(releaseStartUpMemory()).toBeUndefined();
  });
});
