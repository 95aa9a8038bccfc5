/**
 * The memory-bound tests of both brokers: 20 messages of 20 MB (over the 8 MiB body limit) queued with 20
 * good `test.stamp` ones, and a worker process whose kernel high-water mark (VmHWM) is read at the end.
 */
import { type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { spawnTestWorker } from './spawn-worker.js';

export const HEAVY = 20;
export const GOOD = 20;
export const HEAVY_BYTES = 20 * 1024 * 1024;

/** A `test.stamp` task's body and headers; with `pad`, a kwarg that makes the body that heavy. */
export function stampTask(key: string, pad?: string): { id: string; body: Buffer; headers: Record<string, unknown> } {
  const id = randomUUID();
  const kwargs: Record<string, unknown> = { key, due_ms: Date.now() };
  if (pad !== undefined) kwargs.pad = pad;
  return {
    id,
    body: Buffer.from(JSON.stringify([[], kwargs, {}])),
    headers: { lang: 'py', task: 'test.stamp', id, root_id: id, retries: 0 },
  };
}

/** Heavy and good interleaved, the order both tests queue them in before the worker starts. */
export function* heavyAndGood(key: string): Generator<ReturnType<typeof stampTask>> {
  const pad = 'x'.repeat(HEAVY_BYTES);
  for (let i = 0; i < HEAVY; i++) {
    yield stampTask(key, pad);
    yield stampTask(key);
  }
}

function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m?.[1] ? Number(m[1]) / 1024 : NaN;
}

export interface MeasuredWorker {
  process: ChildProcess;
  /** The worker's peak RSS so far, in MB; logs it (and, with RSS_SERIES set, the RSS sampled every 0.5 s). */
  peakMb(): number;
}

/** `spec/support/worker-main.ts -Q queue -c 4`, results disabled, with `env` added. */
export function startMeasuredWorker(queue: string, env: Record<string, string>): MeasuredWorker {
  const w = spawnTestWorker({
    queue,
    concurrency: 4,
    env: { CELERY_RESULT_BACKEND: 'disabled', CELERY_WORKER_HOSTNAME: `${queue}@test`, LOG_LEVEL: 'error', ...env },
  });
  const series: number[] = [];
  const sampler = setInterval(() => {
    try {
      series.push(Math.round(statusMb(w.pid ?? 0, 'VmRSS')));
    } catch {
      /* gone */
    }
  }, 500);
  w.once('exit', () => clearInterval(sampler));
  return {
    process: w,
    peakMb() {
      clearInterval(sampler);
      const peak = statusMb(w.pid ?? 0, 'VmHWM');
      if (process.env.RSS_SERIES) console.log(series.join(' '));
      console.log(`peak RSS of the worker: ${peak.toFixed(0)} MB`);
      return peak;
    },
  };
}
