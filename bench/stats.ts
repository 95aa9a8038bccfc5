/** The statistics of the benchmark report: pure, so the numbers it prints are the ones its tests check. */

export interface Summary {
  n: number;
  median: number;
  min: number;
  max: number;
}

const sorted = (xs: readonly number[]) => xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);

/** Nearest-rank percentile (p in 0..100) of the finite values; NaN when there are none. */
export function percentile(xs: readonly number[], p: number): number {
  const s = sorted(xs);
  if (s.length === 0) return NaN;
  const rank = Math.ceil((Math.min(100, Math.max(0, p)) / 100) * s.length);
  return s[Math.max(0, rank - 1)] ?? NaN;
}

/** The middle value, or the mean of the two middle ones. */
export function median(xs: readonly number[]): number {
  const s = sorted(xs);
  if (s.length === 0) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

export function summarize(xs: readonly number[]): Summary {
  const s = sorted(xs);
  return { n: s.length, median: median(s), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}

/** a / b, or NaN when either is missing or b is zero (a ratio to nothing is no ratio). */
export function ratio(a: number, b: number): number {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN;
}

/** The list started at position `by` (mod its length): repetition r runs the systems in a rotated order. */
export function rotated<T>(xs: readonly T[], by: number): T[] {
  if (xs.length === 0) return [];
  const k = ((by % xs.length) + xs.length) % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}
