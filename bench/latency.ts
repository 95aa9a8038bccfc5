/**
 * The latency benchmark: bench.stamp (returns the time it started) published by Python Celery at a fixed
 * rate; publish → task start and publish → result (its PUBLISH seen by the producer), p50 and p99, per rate, every
 * time on one clock (CLOCK_MONOTONIC: bench/python/resultclock.py); our worker and
 * Python Celery's prefork worker, each -c 4 with Smarter's defaults (early ack, prefetch 4 × concurrency).
 *
 *   npm run build && node dist/bench/latency.js [rates=100,1000] [seconds=10]
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { record, type Sample } from './record.js';
import { percentile, rotated } from './stats.js';
import {
  AMQP_URL,
  PYTHON,
  REDIS_URL,
  REPETITION,
  consumersUp,
  deleteQueue,
  pythonWorkerArgs,
  stop,
} from './support.js';

const exec = promisify(execFile);
const rates = (process.argv[2] ?? '100,1000').split(',').map(Number);
const seconds = Number(process.argv[3] ?? 10);
const queue = `bench_latency_${process.pid}`;
const env = { ...process.env, CELERY_BROKER_URL: AMQP_URL, CELERY_RESULT_BACKEND: REDIS_URL };

const systems: Record<string, () => ChildProcess> = {
  'smarter-worker': () =>
    spawn(process.execPath, ['dist/bench/iso-worker.js', '-Q', queue, '-c', '4', '-l', 'warning'], {
      env,
      stdio: 'ignore',
    }),
  'python-celery': () =>
    spawn(PYTHON, pythonWorkerArgs('benchlatency', queue, 4, ['--without-heartbeat']), {
      cwd: 'bench/python',
      env,
      stdio: 'ignore',
    }),
};

const samples: Sample[] = [];
for (const [system, start] of rotated(Object.entries(systems), REPETITION)) {
  await deleteQueue(queue);
  const worker = start();
  await consumersUp(queue);
  for (const rate of rates) {
    process.stderr.write(`${system} at ${rate}/s\n`);
    const { stdout } = await exec(
      PYTHON,
      ['bench/python/benchlatency.py', 'stream', queue, String(rate), String(seconds)],
      { env, maxBuffer: 1 << 26, timeout: 600_000 },
    );
    const got = JSON.parse(stdout) as { start: number[]; result: number[]; missing: number };
    for (const [what, xs] of [
      ['start', got.start],
      ['result', got.result],
    ] as const) {
      for (const p of [50, 99]) {
        samples.push({
          bench: 'latency',
          system,
          metric: `${what} p${p}`,
          unit: 'ms',
          value: percentile(xs, p),
          x: rate,
        });
      }
    }
    samples.push({ bench: 'latency', system, metric: 'lost', unit: 'tasks', value: got.missing, x: rate });
  }
  await stop(worker, 'SIGQUIT');
}
await deleteQueue(queue);
record(samples);

process.stdout.write(
  `\nbench.stamp published by Python Celery for ${seconds} s per rate; -c 4 each\n\n| system | rate/s | metric | ms |\n|---|---:|---|---:|\n`,
);
for (const s of samples) process.stdout.write(`| ${s.system} | ${s.x} | ${s.metric} | ${s.value.toFixed(2)} |\n`);
