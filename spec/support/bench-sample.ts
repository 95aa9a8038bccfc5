/** Samples for the tests of the bench report and plots, as the benchmarks record them. */
import type { Sample } from '../../bench/record.js';

/** `x` only where the metric has an x axis, as a benchmark leaves it out of the others. */
export const benchSample = (
  bench: string,
  system: string,
  metric: string,
  unit: string,
  value: number,
  x?: number,
): Sample => ({ bench, system, metric, unit, value, ...(x === undefined ? {} : { x }) });
