/**
 * The memory-bound tests of both brokers: 20 messages of 20 MB (over the 8 MiB body limit) queued with 20 good
 * ones, and the shipped worker (`dist/tasks/main.js`, configured by its environment alone) whose kernel
 * high-water mark (VmHWM) is read at the end. Every message is a `celery.accumulate` call, a task the shipped
 * worker has: a good one stores its arguments as its result, a heavy one would return its 20 MB argument.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDIS_URL } from './amqp.js';
import { type ShippedProcess, ensureBuilt, startShipped } from './shipped-process.js';

export const HEAVY = 20;
export const GOOD = 20;
export const HEAVY_BYTES = 20 * 1024 * 1024;

export interface AccumulateMessage {
  id: string;
  heavy: boolean;
  body: Buffer;
  headers: Record<string, unknown>;
}

/** A `celery.accumulate` call; with `pad`, its one argument, which makes the body that heavy. */
export function accumulateMessage(pad?: string): AccumulateMessage {
  const id = randomUUID();
  const args = pad === undefined ? [1, 2] : [pad];
  return {
    id,
    heavy: pad !== undefined,
    body: Buffer.from(JSON.stringify([args, {}, { callbacks: null, errbacks: null, chain: null, chord: null }])),
    headers: { lang: 'py', task: 'celery.accumulate', id, root_id: id, retries: 0 },
  };
}

/** Heavy and good interleaved, the order both tests queue them in before the worker starts. */
export function* heavyAndGood(): Generator<AccumulateMessage> {
  const pad = 'x'.repeat(HEAVY_BYTES);
  for (let i = 0; i < HEAVY; i++) {
    yield accumulateMessage(pad);
    yield accumulateMessage();
  }
}

function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m?.[1] ? Number(m[1]) / 1024 : NaN;
}

export interface MeasuredWorker {
  process: ShippedProcess;
  /** The worker's peak RSS so far, in MB; logs it (and, with RSS_SERIES set, the RSS sampled every 0.5 s). */
  peakMb(): number;
}

/**
 * `node dist/tasks/main.js -Q queue -c 4` with nothing but `env` and what every pod has (a PATH), its results in
 * the shared Redis (`support/results.ts` reads them).
 */
export function startMeasuredWorker(queue: string, env: Record<string, string>): MeasuredWorker {
  ensureBuilt();
  const w = startShipped({
    name: 'worker',
    script: 'dist/tasks/main.js',
    args: ['-Q', queue, '-c', '4'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      CELERY_RESULT_BACKEND: REDIS_URL,
      CELERY_WORKER_HOSTNAME: `${queue}@test`,
      LOG_LEVEL: 'error',
      ...env,
    },
    logDir: mkdtempSync(join(tmpdir(), 'heavy-')),
  });
  const series: number[] = [];
  const sampler = setInterval(() => {
    try {
      if (w.alive()) series.push(Math.round(statusMb(w.pid, 'VmRSS')));
    } catch {
      /* gone */
    }
  }, 500);
  return {
    process: w,
    peakMb() {
      clearInterval(sampler);
      if (!w.alive()) throw new Error(`the worker exited (${w.exit() ?? '?'}):\n${w.tail()}`);
      const peak = statusMb(w.pid, 'VmHWM');
      if (process.env.RSS_SERIES) console.log(series.join(' '));
      console.log(`peak RSS of the worker: ${peak.toFixed(0)} MB`);
      return peak;
    },
  };
}
