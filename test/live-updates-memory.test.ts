/**
 * What the abuse of live updates leaves in memory: the service in a child process with
 * `--expose-gc` (test/support/live-abuse-child.ts) takes rounds of 406 storms from many
 * addresses, refused streams and clients that leave before their answer, on each GraphQL HTTP
 * path. After each round and a collection, no subscription queue and no HTTP response may be
 * left alive (v8.queryObjects counts them: each refused subscription used to keep both, with the
 * request's context and socket), no slot held, and the heap back to its level.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { LiveUpdateStats } from '../src/service/live-updates.js';
import { copyOfTemplate } from './support/pglite-templates.js';

interface RoundFigures {
  round: number;
  queues: number;
  responses: number;
  live: LiveUpdateStats;
  heapUsedMb: number;
  rssMb: number;
}

const ROUNDS = 3;

function abuse(graphqlPath: 'service' | 'yoga'): RoundFigures[] {
  // A copy of the run's new database, instead of an initdb in the child.
  const folder = copyOfTemplate('empty');
  let child: SpawnSyncReturns<string>;
  try {
    child = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '--disable-warning=ExperimentalWarning',
        '--import',
        'tsx',
        'test/support/live-abuse-child.ts',
        graphqlPath,
        String(ROUNDS),
        ...(folder === undefined ? [] : [folder]),
      ],
      { encoding: 'utf8', timeout: 240_000, env: { ...process.env, NODE_ENV: 'test' } },
    );
  } finally {
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  }
  expect(child.status, child.stderr).toBe(0);
  return child.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as RoundFigures);
}

describe.each(['service', 'yoga'] as const)('memory after abusing live updates (%s path)', (graphqlPath) => {
  it('keeps no subscription, response or slot of a refused request, and the heap returns to its level', () => {
    const rounds = abuse(graphqlPath);
    expect(rounds).toHaveLength(ROUNDS);
    for (const figures of rounds) {
      expect(figures.queues, `round ${figures.round}`).toBe(0);
      expect(figures.live.open).toEqual({ sse: 0, websocket: 0, rest: 0 });
      expect(figures.live.clients).toBe(0);
      expect(figures.live.watchedNames).toBe(0);
    }
    const [first, last] = [rounds[0], rounds.at(-1)];
    expect(last?.responses).toBeLessThanOrEqual(first?.responses ?? 0);
    // Each round of the abuse used to leave about 1.5 MB of heap (600 queues, 750 responses after three).
    expect((last?.heapUsedMb ?? Infinity) - (first?.heapUsedMb ?? 0)).toBeLessThan(1);
  }, 300_000);
});
