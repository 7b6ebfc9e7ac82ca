/**
 * The arithmetic of `npm run bench:soak`, apart from the run so that it can be tested: the
 * least-squares slope of memory over time, and what slope counts as flat.
 */

export interface Slope {
  /** Change of y per unit of x. */
  slope: number;
  /** Its standard error, from the scatter of the points around the line; undefined under 3 points. */
  standardError: number | undefined;
  points: number;
}

/** The ordinary least-squares line through the points; undefined without two distinct x. */
export function leastSquaresSlope(points: ReadonlyArray<readonly [x: number, y: number]>): Slope | undefined {
  const n = points.length;
  if (n < 2) return undefined;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  // Centred sums: the x are epoch-sized seconds or minutes, and raw sums of squares lose digits.
  let sxx = 0;
  let sxy = 0;
  for (const [x, y] of points) {
    sxx += (x - meanX) ** 2;
    sxy += (x - meanX) * (y - meanY);
  }
  if (sxx === 0) return undefined;
  const slope = sxy / sxx;
  if (n < 3) return { slope, standardError: undefined, points: n };
  const intercept = meanY - slope * meanX;
  const residuals = points.reduce((sum, [x, y]) => sum + (y - intercept - slope * x) ** 2, 0);
  return { slope, standardError: Math.sqrt(residuals / (n - 2) / sxx), points: n };
}

/**
 * Above this RSS slope after warm-up (MB per hour) the soak calls memory growing. A leak of a
 * few hundred bytes per request, at the soak's 1,000 requests per second, is hundreds of MB an
 * hour; 10 MB/h is what a 30-minute run can tell from the saw-tooth of garbage collection.
 */
export const FLAT_RSS_MB_PER_HOUR = 10;

export type Verdict = 'flat' | 'levelled off' | 'growing' | 'inconclusive' | 'too short';

/**
 * Ten minutes of samples every 5 s. RSS still settles for several minutes after the warm-up
 * (bench/README.md, "Settings of the soak"): a shorter stretch mostly measures that.
 */
export const MIN_SLOPE_POINTS = 120;

/**
 * From the RSS slope after the warm-up and the slope of the later half of that time:
 * - too short: under MIN_SLOPE_POINTS samples (10 minutes) after the warm-up;
 * - flat: a slope of at most FLAT_RSS_MB_PER_HOUR;
 * - levelled off: above it, but the later half is flat: a step (V8 growing a space, a cache
 *   filling) and a plateau after it, which a leak does not make;
 * - growing: above it, more than two standard errors from zero, and still rising in the later half;
 * - inconclusive: above it but within the noise (run longer).
 */
export function memoryVerdict(rssSlope: Slope | undefined, laterSlope?: Slope): Verdict {
  if (rssSlope === undefined || rssSlope.standardError === undefined || rssSlope.points < MIN_SLOPE_POINTS) {
    return 'too short';
  }
  if (rssSlope.slope <= FLAT_RSS_MB_PER_HOUR) return 'flat';
  if (rssSlope.slope <= 2 * rssSlope.standardError) return 'inconclusive';
  const laterFlat =
    laterSlope !== undefined && laterSlope.points >= MIN_SLOPE_POINTS / 2 && laterSlope.slope <= FLAT_RSS_MB_PER_HOUR;
  return laterFlat ? 'levelled off' : 'growing';
}
