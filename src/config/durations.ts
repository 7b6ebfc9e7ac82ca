/** Durations in settings: a whole number and a unit, `ms`, `s`, `m`, `h` or `d` (`500ms`, `5m`, `5d`). */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds of one duration, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = /^([0-9]{1,9})(ms|s|m|h|d)$/.exec(text.trim());
  if (match === null) return undefined;
  const ms = Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? Number.NaN);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** Comma-separated durations, each above zero; undefined when one is not (or there are none). */
export function parseDurationList(text: string): number[] | undefined {
  const steps = text.split(',').map(parseDuration);
  return steps.every((step) => step !== undefined && step > 0) ? (steps as number[]) : undefined;
}
