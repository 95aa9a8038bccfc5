/**
 * Celery's `memsample` and `memdump` (celery/utils/debug.py): the resident memory sampled on request, and a
 * dump of the samples with the memory after a collection; here with the V8 heap beside it, which is where a
 * leak of a Node.js worker shows first.
 */

const UNITS: ReadonlyArray<readonly [number, string]> = [
  [2 ** 40, 'TB'],
  [2 ** 30, 'GB'],
  [2 ** 20, 'MB'],
  [2 ** 10, 'KB'],
  [0, 'b'],
];

/** Celery's `hfloat`: an integer as it is, else five significant digits. */
function hfloat(f: number): string {
  return Number.isInteger(f) ? String(f) : String(Number(f.toPrecision(5)));
}

/** Celery's `humanbytes`: `45.234MB`. */
export function humanbytes(s: number): string {
  for (const [div, unit] of UNITS) if (s >= div) return `${hfloat(div ? s / div : s)}${unit}`;
  return `${s}b`;
}

const samples: string[] = [];

/** `memsample`: the RSS now, kept for the next `memdump`. */
export function sampleMemory(rss: number = process.memoryUsage.rss()): string {
  const v = humanbytes(rss);
  samples.push(v);
  return v;
}

/** `memdump [n]`: up to `n` samples (evenly picked), then the RSS and heap after a collection when one can be forced. */
export function memdump(n = 10): string {
  const picked = samples.length <= n ? [...samples] : samples.filter((_, i) => i % Math.ceil(samples.length / n) === 0);
  samples.length = 0;
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  const lines: string[] = [];
  if (picked.length > 0) {
    lines.push('- rss (sample):');
    for (const s of picked) lines.push(`-    > ${s},`);
  }
  lines.push(`- rss (end): ${humanbytes(m.rss)}.`);
  lines.push(`- heap (end): ${humanbytes(m.heapUsed)} used of ${humanbytes(m.heapTotal)}.`);
  return `${lines.join('\n')}\n`;
}
