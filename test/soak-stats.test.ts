import { describe, expect, it } from 'vitest';
import { FLAT_RSS_MB_PER_HOUR, leastSquaresSlope, MIN_SLOPE_POINTS, memoryVerdict } from '../bench/soak-stats.js';

describe('the soak slope (bench/soak-stats.ts)', () => {
  it('finds the slope of points on a line, whatever their offset', () => {
    const points = [0, 5, 10, 15, 20].map((t) => [1_800_000_000 + t, 200 + 0.5 * t] as const);
    const fit = leastSquaresSlope(points);
    expect(fit?.slope).toBeCloseTo(0.5, 9);
    expect(fit?.standardError).toBeCloseTo(0, 9);
    expect(fit?.points).toBe(5);
  });

  it('fits noisy points by least squares, with the standard error of the slope', () => {
    // Worked by hand: the line is y = 2x, the residuals are 1, -1, -1, 1 and Σ(x - x̄)² = 5, so the
    // standard error is sqrt(Σr² / (n - 2) / Σ(x - x̄)²) = sqrt(4 / 2 / 5) ≈ 0.632.
    const fit = leastSquaresSlope([
      [0, 1],
      [1, 1],
      [2, 3],
      [3, 7],
    ]);
    expect(fit?.slope).toBeCloseTo(2, 9);
    expect(fit?.standardError).toBeCloseTo(Math.sqrt(4 / 2 / 5), 9);
  });

  it('has no slope without two distinct x, and no standard error under three points', () => {
    expect(leastSquaresSlope([])).toBeUndefined();
    expect(leastSquaresSlope([[1, 5]])).toBeUndefined();
    expect(
      leastSquaresSlope([
        [1, 5],
        [1, 6],
      ]),
    ).toBeUndefined();
    expect(
      leastSquaresSlope([
        [0, 5],
        [1, 6],
      ]),
    ).toEqual({ slope: 1, standardError: undefined, points: 2 });
  });

  it('calls memory flat up to the threshold; above it, levelled off, growing or inconclusive', () => {
    const slope = (value: number, standardError: number) => ({ slope: value, standardError, points: 360 });
    expect(memoryVerdict(slope(FLAT_RSS_MB_PER_HOUR, 50))).toBe('flat');
    expect(memoryVerdict(slope(-40, 5))).toBe('flat');
    expect(memoryVerdict(slope(60, 10))).toBe('growing');
    expect(memoryVerdict(slope(30, 20))).toBe('inconclusive');
    expect(memoryVerdict(slope(60, 10), slope(-5, 20))).toBe('levelled off');
    expect(memoryVerdict(slope(60, 10), slope(40, 20))).toBe('growing');
    expect(memoryVerdict(undefined)).toBe('too short');
    expect(memoryVerdict({ slope: 0, standardError: 1, points: MIN_SLOPE_POINTS - 1 })).toBe('too short');
  });
});
