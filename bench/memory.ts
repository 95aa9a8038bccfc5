/**
 * The memory benchmark: RSS of the infrastructure worker (bench/iso-worker.ts on its own queue, at the
 * chart's concurrency) idle, with N and M checks waiting (bench.check with a 10-minute countdown: they wait in
 * the broker's delay levels, not in the worker), then after a churn of C tasks run through it. The target: under
 * 150 MB throughout, and no growth between the last two. Beside each RSS, the heap in use after a full GC
 * (heap-probe.ts): what the worker retains, as against a heap that grew and has not been returned.
 *
 *   npm run build && node dist/bench/memory.js [waiting=10000,100000] [churn=100000] [rounds=1]
 *
 * More than one round of churn tells a high-water mark (RSS that stays where the first churn left it) from a leak.
 *
 * BENCH_HEAP_SNAPSHOT=<dir> writes a heap snapshot of the worker at each state, to diff in Chrome's DevTools.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chartConcurrency } from './chart-limits.js';
import type { HeapReport } from './heap-probe.js';
import { record, type Sample } from './record.js';
import {
  AMQP_URL,
  PYTHON,
  REDIS_URL,
  askProbe,
  consumersUp,
  deleteQueue,
  pythonPublish,
  readyCount,
  rssMb,
  sleep,
  stop,
} from './support.js';

const exec = promisify(execFile);
const waiting = (process.argv[2] ?? '10000,100000').split(',').map(Number);
const churn = Number(process.argv[3] ?? 100_000);
const rounds = Number(process.argv[4] ?? 1);
const queue = `bench_memory_${process.pid}`;
const HEAP_OUT = path.join(os.tmpdir(), `bench-heap-${process.pid}.jsonl`);
const env = {
  ...process.env,
  CELERY_BROKER_URL: AMQP_URL,
  CELERY_RESULT_BACKEND: REDIS_URL,
  BENCH_INFRA_QUEUE: queue,
  CELERY_TASK_IGNORE_RESULT: 'true',
  BENCH_HEAP_OUT: HEAP_OUT,
};
const system = 'smarter-worker';
const LIMIT_MB = 150;

await deleteQueue(queue);
const concurrency = chartConcurrency().infra;
const worker = spawn(
  process.execPath,
  ['--expose-gc', 'dist/bench/iso-worker.js', '-Q', queue, '-c', String(concurrency), '-l', 'warning'],
  { env, stdio: 'ignore' },
);
await consumersUp(queue);
const samples: Sample[] = [];

/** Once the queue is empty and the worker has settled: its RSS as it is, then its heap after a full GC. */
async function measure(metric: string, x: number): Promise<void> {
  while ((await readyCount(queue)) > 0) await sleep(500);
  await sleep(3000);
  samples.push({ bench: 'memory', system, metric, unit: 'MB', value: rssMb(worker.pid), x });
  const heap = await askProbe<HeapReport>(worker, HEAP_OUT);
  process.stderr.write(`memory: ${metric} @ ${x}: after a full GC ${JSON.stringify(heap)}\n`);
  samples.push({
    bench: 'memory',
    system,
    metric: `heap after GC, ${metric.replace(/^RSS,? /, '')}`,
    unit: 'MB',
    value: heap.heapUsedMb,
    x,
  });
}

await measure('RSS, checks waiting', 0);
let sent = 0;
for (const total of waiting) {
  process.stderr.write(`memory: ${total} checks waiting\n`);
  await exec(PYTHON, ['bench/python/benchiso.py', 'storm', queue, String(total - sent), '600'], {
    env,
    maxBuffer: 1 << 24,
    timeout: 900_000,
  });
  sent = total;
  await measure('RSS, checks waiting', total);
}
for (let round = 1; round <= rounds; round++) {
  process.stderr.write(`memory: churn of ${churn} tasks (round ${round} of ${rounds})\n`);
  // The worker takes them as they come (the churn runs through it): the queue never holds them all.
  await pythonPublish(queue, churn, { held: false });
  await measure('RSS after churn', churn * round);
}
await stop(worker, 'SIGQUIT');
await deleteQueue(queue);
fs.rmSync(HEAP_OUT, { force: true });
record(samples);

process.stdout.write(`\n${system} (infrastructure worker, -c ${concurrency}) memory\n\n| state | MB |\n|---|---:|\n`);
for (const s of samples) process.stdout.write(`| ${s.metric} @ ${s.x} | ${s.value} |\n`);
const rss = samples.filter((s) => s.metric.startsWith('RSS'));
const [beforeChurn, afterChurn] = rss.slice(-2).map((s) => s.value);
process.stdout.write(
  `\nhighest RSS ${Math.max(...rss.map((s) => s.value))} MB (target < ${LIMIT_MB}); last two ${beforeChurn ?? '?'} → ${afterChurn ?? '?'} MB (target: no growth)\n`,
);
