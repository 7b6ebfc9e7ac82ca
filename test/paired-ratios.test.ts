import { describe, expect, it } from 'vitest';
import { pairedRatio, type Repetition, repetitionOrder } from '../bench/paired-ratios.js';

/** A repetition whose key side served `keyRps` a second at `keyCpu` s a request, its base `baseRps` at `baseCpu`. */
function repetition(keyRps: number, keyCpu: number, baseRps: number, baseCpu: number): Repetition {
  const slice = (rps: number, cpu: number) => ({ requests: rps * 3, seconds: 3, cpuSeconds: rps * 3 * cpu });
  return {
    key: [slice(keyRps, keyCpu), slice(keyRps, keyCpu)],
    base: [slice(baseRps, baseCpu), slice(baseRps, baseCpu)],
  };
}

describe('paired ratios (bench/paired-ratios.ts)', () => {
  it('puts each side first as often as last: A B B A, then B A A B', () => {
    expect(repetitionOrder(0)).toEqual(['base', 'key', 'key', 'base']);
    expect(repetitionOrder(1)).toEqual(['key', 'base', 'base', 'key']);
    expect(repetitionOrder(2)).toEqual(repetitionOrder(0));
    const firsts = [0, 1, 2, 3].map((r) => repetitionOrder(r)[0]);
    expect(firsts.filter((side) => side === 'key')).toHaveLength(2);
  });

  it('divides the key side by the base within each repetition, whatever the machine did between them', () => {
    // The machine twice as slow in the second repetition: both sides' figures move, the ratio does not.
    const ratio = pairedRatio([repetition(6000, 120e-6, 8000, 100e-6), repetition(3000, 240e-6, 4000, 200e-6)]);
    expect(ratio?.throughput.median).toBeCloseTo(0.75, 9);
    expect(ratio?.cpu.median).toBeCloseTo(1.2, 9);
    expect(ratio?.cpu.lowest).toBeCloseTo(1.2, 9);
    expect(ratio?.cpu.highest).toBeCloseTo(1.2, 9);
    expect(ratio?.repetitions).toBe(2);
  });

  it('takes CPU per request over the slices of a side together, not the mean of the slices', () => {
    const ratio = pairedRatio([
      {
        key: [
          { requests: 1000, seconds: 3, cpuSeconds: 0.1 },
          { requests: 3000, seconds: 3, cpuSeconds: 0.5 },
        ],
        base: [{ requests: 4000, seconds: 6, cpuSeconds: 0.4 }],
      },
    ]);
    // (0.6 s / 4000) / (0.4 s / 4000) = 1.5; the slices' own 100 and 167 µs would average 133 µs, 1.33×.
    expect(ratio?.cpu.median).toBeCloseTo(1.5, 9);
    expect(ratio?.throughput.median).toBeCloseTo(4000 / 6 / (4000 / 6), 9);
  });

  it('is the median of the repetitions: one caught by a burst of the machine does not move it', () => {
    const ratio = pairedRatio([
      repetition(5000, 110e-6, 5000, 100e-6),
      repetition(5000, 112e-6, 5000, 100e-6),
      repetition(5000, 300e-6, 5000, 100e-6),
    ]);
    expect(ratio?.cpu.median).toBeCloseTo(1.12, 9);
    expect(ratio?.cpu.lowest).toBeCloseTo(1.1, 9);
    expect(ratio?.cpu.highest).toBeCloseTo(3, 9);
  });

  it('leaves out a repetition in which a side answered nothing, and has no ratio without any other', () => {
    const silent: Repetition = {
      key: [{ requests: 0, seconds: 3, cpuSeconds: 0.2 }],
      base: [{ requests: 9000, seconds: 3, cpuSeconds: 0.9 }],
    };
    expect(pairedRatio([silent])).toBeUndefined();
    expect(pairedRatio([])).toBeUndefined();
    const ratio = pairedRatio([silent, repetition(5000, 100e-6, 5000, 100e-6)]);
    expect(ratio?.repetitions).toBe(1);
    expect(ratio?.cpu.median).toBeCloseTo(1, 9);
  });
});
