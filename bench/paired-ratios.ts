/**
 * The arithmetic of `npm run bench`'s paired ratios, apart from the run so that it can be tested.
 *
 * A ratio of two scenarios' averages over the rounds compares measurements taken a minute or more
 * apart. On a shared machine whose speed moves by half within tens of seconds (the static server
 * from 19,668 to 39,176 requests a second across one run's rounds), that ratio carries the drift:
 * one build's CPU GraphQL / REST read 0.70× to 1.66× round by round. A ratio a target judges is
 * measured instead in repetitions of four adjacent slices, A B B A then B A A B, so that each side
 * is as often first as last and a drift within a repetition hits both sides alike; the figure is
 * the median of the repetitions' ratios, so one repetition caught by a burst of the machine does
 * not move it.
 */
import { median } from './support.js';

/** What one scenario served in one slice, and the CPU its server spent meanwhile. */
export interface Slice {
  requests: number;
  seconds: number;
  cpuSeconds: number;
}

/** The scenario a target judges (`key`) or the one it is judged against (`base`). */
export type Side = 'key' | 'base';

/** One repetition's slices of each side. */
export interface Repetition {
  key: Slice[];
  base: Slice[];
}

/** A median ratio and the lowest and highest of the repetitions' ratios. */
interface RatioSpread {
  median: number;
  lowest: number;
  highest: number;
}

export interface PairedRatio {
  /** Requests a second, key / base. */
  throughput: RatioSpread;
  /** CPU per request answered, key / base. */
  cpu: RatioSpread;
  repetitions: number;
}

/** The order of a repetition's slices: base first in even repetitions, key first in odd ones. */
export function repetitionOrder(repetition: number): Side[] {
  return repetition % 2 === 0 ? ['base', 'key', 'key', 'base'] : ['key', 'base', 'base', 'key'];
}

/** The paired ratios of the repetitions; undefined without one in which both sides answered. */
export function pairedRatio(repetitions: readonly Repetition[]): PairedRatio | undefined {
  const usable = repetitions.filter((r) => requests(r.key) > 0 && requests(r.base) > 0);
  if (usable.length === 0) return undefined;
  return {
    throughput: spread(usable.map((r) => perSecond(r.key) / perSecond(r.base))),
    cpu: spread(usable.map((r) => cpuSecondsPerRequest(r.key) / cpuSecondsPerRequest(r.base))),
    repetitions: usable.length,
  };
}

function spread(ratios: number[]): RatioSpread {
  return { median: median(ratios), lowest: Math.min(...ratios), highest: Math.max(...ratios) };
}

function requests(slices: readonly Slice[]): number {
  return slices.reduce((sum, s) => sum + s.requests, 0);
}

function perSecond(slices: readonly Slice[]): number {
  return requests(slices) / slices.reduce((sum, s) => sum + s.seconds, 0);
}

function cpuSecondsPerRequest(slices: readonly Slice[]): number {
  return slices.reduce((sum, s) => sum + s.cpuSeconds, 0) / requests(slices);
}
