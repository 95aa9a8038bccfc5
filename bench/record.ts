/**
 * What a benchmark run hands to `npm run bench`: one sample per (system, metric) and repetition, appended as a
 * JSON line to the file named by BENCH_OUT. Run on its own, a benchmark prints its table and records nothing.
 */
import fs from 'node:fs';

export interface Sample {
  bench: string;
  system: string;
  metric: string;
  unit: string;
  value: number;
  /** What the metric's x axis is, for a plot (a rate, a number of waiting checks). */
  x?: number;
}

export function record(samples: Sample[]): void {
  const out = process.env.BENCH_OUT;
  if (!out) return;
  fs.appendFileSync(out, samples.map((s) => `${JSON.stringify(s)}\n`).join(''));
}

export function readSamples(file: string): Sample[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Sample);
}
