/**
 * What the memory benchmark (memory.ts) asks the infrastructure worker after each state, beside its RSS: on
 * SIGUSR2, a full GC (the worker runs with --expose-gc) then the heap in use, appended to BENCH_HEAP_OUT as one
 * JSON line. The RSS is the target; the heap after a GC tells retention (what a churn leaves reachable) from a
 * heap that merely grew. BENCH_HEAP_SNAPSHOT=<dir> also writes a heap snapshot there each time, to diff.
 */
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';

export interface HeapReport {
  /** After a full GC, MB. */
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  arrayBuffersMb: number;
  rssMb: number;
}

const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

export function installHeapProbe(out: string, snapshots: string | undefined): void {
  let n = 0;
  process.on('SIGUSR2', () => {
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    const report: HeapReport = {
      heapUsedMb: mb(m.heapUsed),
      heapTotalMb: mb(m.heapTotal),
      externalMb: mb(m.external),
      arrayBuffersMb: mb(m.arrayBuffers),
      rssMb: mb(m.rss),
    };
    if (snapshots) v8.writeHeapSnapshot(path.join(snapshots, `worker-${process.pid}-${n++}.heapsnapshot`));
    fs.appendFileSync(out, `${JSON.stringify(report)}\n`);
  });
}
