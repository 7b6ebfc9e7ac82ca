/**
 * Rate limits without a shared store: the in-memory limiter and what createRateLimits builds
 * from the configuration when REDIS_URL is not set.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { createRateLimits } from '../src/limits/create-rate-limits.js';
import { createMemoryLimiter } from '../src/limits/memory-limiter.js';
import type { RateLimits } from '../src/limits/rate-limit.js';
import { captureLog } from './support/log-capture.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('in-memory limiter', () => {
  it('allows the budget, then refuses with the time until the window resets', async () => {
    const limiter = createMemoryLimiter('profile', 3, 60);
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume('203.0.113.1'));

    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    for (const d of decisions) {
      expect(d.limit).toBe(3);
      expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(d.resetSeconds).toBeLessThanOrEqual(60);
    }
  });

  it('counts each key on its own', async () => {
    const limiter = createMemoryLimiter('profile', 1, 60);
    expect((await limiter.consume('203.0.113.1')).allowed).toBe(true);
    expect((await limiter.consume('203.0.113.1')).allowed).toBe(false);
    expect((await limiter.consume('203.0.113.2')).allowed).toBe(true);
  });

  it('takes several points at once', async () => {
    const limiter = createMemoryLimiter('profile', 5, 60);
    expect(await limiter.consume('k', 4)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await limiter.consume('k', 2)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('gives the full budget back when the window has passed', async () => {
    const limiter = createMemoryLimiter('profile', 2, 1);
    await limiter.consume('k');
    await limiter.consume('k');
    expect((await limiter.consume('k')).allowed).toBe(false);
    await sleep(1_100); // the 1 s window passes: a duration of the scenario, not a wait for an event
    expect(await limiter.consume('k')).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe('createRateLimits without REDIS_URL', () => {
  let limits: RateLimits | undefined;
  afterEach(async () => {
    await limits?.close();
    limits = undefined;
  });

  it('builds the owner-check and profile budgets from the configuration', async () => {
    const config = loadConfig({ NODE_ENV: 'test', OWNER_CHECK_LIMIT: '2', PROFILE_LIMIT: '3' });
    limits = createRateLimits(config, captureLog().logger);

    expect(limits.ownerCheck.limit).toBe(2);
    expect(limits.profile?.limit).toBe(3);
    const owner = [];
    for (let i = 0; i < 3; i++) owner.push((await limits.ownerCheck.consume('198.51.100.7')).allowed);
    expect(owner).toEqual([true, true, false]);
  });

  it('defaults to 10 owner checks per minute', async () => {
    limits = createRateLimits(loadConfig({ NODE_ENV: 'test' }), captureLog().logger);
    const allowed = [];
    for (let i = 0; i < 11; i++) allowed.push((await limits.ownerCheck.consume('198.51.100.7')).allowed);
    expect(allowed.filter(Boolean)).toHaveLength(10);
    expect(allowed[10]).toBe(false);
  });

  it('keeps the owner-check and profile budgets apart', async () => {
    const config = loadConfig({ NODE_ENV: 'test', OWNER_CHECK_LIMIT: '1', PROFILE_LIMIT: '5' });
    limits = createRateLimits(config, captureLog().logger);
    await limits.ownerCheck.consume('198.51.100.7');
    expect((await limits.ownerCheck.consume('198.51.100.7')).allowed).toBe(false);
    expect(await limits.profile?.consume('198.51.100.7')).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('switches the profile limit off with PROFILE_LIMIT=0', () => {
    limits = createRateLimits(loadConfig({ NODE_ENV: 'test', PROFILE_LIMIT: '0' }), captureLog().logger);
    expect(limits.profile).toBeNull();
    expect(limits.ownerCheck.limit).toBe(10);
  });
});
