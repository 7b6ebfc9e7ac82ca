/**
 * Yoga and envelop run every hook of every GraphQL request through @whatwg-node/promise-helpers.
 * package.json overrides it to 2.x, whose sync path allocates no fake promises (a quarter of a
 * GraphQL request's garbage with 1.x: bench/README.md), and patches/ gives 2.x back the deprecated
 * `mapMaybePromise` that @envelop/core 5.6 still re-exports (docs/decisions.md). These tests fail
 * when an install loses the override or the patch.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/** The version of promise-helpers that `dependent` loads. */
function helpersVersionOf(dependent: string): string {
  const fromDependent = createRequire(createRequire(import.meta.url).resolve(`${dependent}/package.json`));
  const manifest = fromDependent.resolve('@whatwg-node/promise-helpers/package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

describe('@whatwg-node/promise-helpers', () => {
  it('is 2.x for Yoga, envelop and the Node adapter', () => {
    for (const dependent of ['graphql-yoga', '@envelop/core', '@whatwg-node/server']) {
      expect(helpersVersionOf(dependent), dependent).toMatch(/^2\./);
    }
  });

  it("keeps envelop's mapMaybePromise: a value mapped at once, a promise mapped later, a rejection to onError", async () => {
    const { mapMaybePromise } = await import('@envelop/core');
    expect(mapMaybePromise(1, (value: number) => value + 1)).toBe(2);
    expect(await mapMaybePromise(Promise.resolve(1), (value: number) => value + 1)).toBe(2);
    const failed = mapMaybePromise(
      Promise.reject(new Error('no')),
      () => 'mapped',
      (error: Error) => error.message,
    );
    expect(await failed).toBe('no');
  });
});
