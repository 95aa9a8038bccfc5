/** Shared pieces of the benchmarks: queues, a Python producer, process sampling, tables. */
import amqp from 'amqplib';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { retireQueues } from './retire-queue.js';

export const AMQP_URL = process.env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672//';
export const PYTHON = process.env.CELERY_PYTHON ?? '/usr/bin/python3';
const exec = promisify(execFile);

/**
 * Arguments of `python -m celery` for Debian's Celery worker on one queue, as every comparison runs it: prefork,
 * quiet, and without gossip and mingle (they only add start-up time). `extra` adds flags such as
 * `--without-heartbeat` or `-n`.
 */
export function pythonWorkerArgs(app: string, queue: string, concurrency: number, extra: string[] = []): string[] {
  return [
    '-m',
    'celery',
    '-A',
    app,
    'worker',
    '-Q',
    queue,
    '-c',
    String(concurrency),
    '-P',
    'prefork',
    '-l',
    'warning',
  ].concat(['--without-gossip', '--without-mingle'], extra);
}

/** The drain comparisons' Python worker: `benchapp` (celery.accumulate), late ack, on one queue. */
export function pythonDrainWorker(queue: string, concurrency: number, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(PYTHON, pythonWorkerArgs('benchapp', queue, concurrency, ['--without-heartbeat']), {
    cwd: 'bench/python',
    env,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
}

/** The shipped worker (`dist/tasks/main.js`) on one queue, late ack, results ignored, as the drains run it. */
export function ourDrainWorker(
  queue: string,
  flags: string[],
  env: NodeJS.ProcessEnv,
  nodeFlags: readonly string[] = [],
): ChildProcess {
  return spawn(process.execPath, [...nodeFlags, 'dist/tasks/main.js', '-Q', queue, ...flags, '-l', 'warning'], {
    env: { ...env, CELERY_TASK_ACKS_LATE: 'true', CELERY_TASK_IGNORE_RESULT: 'true' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * Milliseconds from `start()` to a consumer on `queue` (an empty one), then stops the process and waits until
 * its consumer is gone, so the next start is timed alone.
 */
export async function timeToConsuming(
  ch: amqp.Channel,
  queue: string,
  system: string,
  start: () => ChildProcess,
): Promise<number> {
  const consumers = async () => (await ch.checkQueue(queue)).consumerCount;
  const t0 = performance.now();
  const child = start();
  while ((await consumers()) === 0) {
    if (child.exitCode !== null) throw new Error(`${system} exited with ${child.exitCode} before consuming`);
    await sleep(2);
  }
  const ms = performance.now() - t0;
  await stop(child);
  while ((await consumers()) > 0) await sleep(10);
  return ms;
}

export async function withChannel<T>(fn: (ch: amqp.Channel) => Promise<T>): Promise<T> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    return await fn(ch);
  } finally {
    await conn.close().catch(() => undefined);
  }
}

export async function freshQueue(name: string): Promise<void> {
  await withChannel(async (ch) => {
    await ch.deleteQueue(name).catch(() => undefined);
    await ch.assertQueue(name, { durable: true });
  });
}

export async function deleteQueue(name: string): Promise<void> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    await retireQueues(conn, [name]);
  } finally {
    await conn.close().catch(() => undefined);
  }
}

export async function readyCount(queue: string): Promise<number> {
  return withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount);
}

/**
 * Publishes `count` celery.accumulate messages with real Python Celery (protocol 2, JSON), and returns once the
 * queue holds every one: RabbitMQ counts the last of them a few hundred milliseconds after the publisher has
 * gone, and a drain whose clock starts at the first count below `count` would time the consumer's start-up too.
 * With `held: false` it returns once they are published: for a queue a worker already consumes, which never holds
 * them all.
 */
export async function pythonPublish(
  queue: string,
  count: number,
  { held = true, timeoutMs = 30_000 }: { held?: boolean; timeoutMs?: number } = {},
): Promise<void> {
  await exec(PYTHON, ['bench/python/benchapp.py', queue, String(count)], {
    env: { ...process.env, CELERY_BROKER_URL: AMQP_URL },
    maxBuffer: 1 << 24,
  });
  if (held) await waitHeld(queue, count, timeoutMs);
}

/** Waits until `queue` holds `count` ready messages: RabbitMQ counts the last publishes a moment after they went. */
export async function waitHeld(queue: string, count: number, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (let ready = await readyCount(queue); ready < count; ready = await readyCount(queue)) {
    if (Date.now() > until) throw new Error(`queue ${queue} holds ${ready} of the ${count} published`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Peak resident set of a process and its children (sum of their high-water marks), in MB. */
export function peakRssMb(pid: number): number {
  const kb = sumOverTree(pid, (p) =>
    Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0),
  );
  return Math.round(kb / 1024);
}

/** Clock ticks a second of /proc's CPU times (`getconf CLK_TCK`, 100 on Linux). */
let clockTicks: number | undefined;

/**
 * CPU seconds (user and system, every thread) spent by a process and its live children, from /proc: a drain's
 * cost beside its time, since on a small machine the consumer, its collector's threads and the broker share the
 * cores. 0 for a process that has gone.
 */
export function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  return sumOverTree(pid, (p) => statCpuTicks(`/proc/${p}/stat`)) / ticksPerSecond();
}

function ticksPerSecond(): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return clockTicks;
}

/**
 * User and system clock ticks of a `/proc/…/stat` file: its 12th and 13th fields after the command name, which may
 * hold spaces.
 */
function statCpuTicks(file: string): number {
  const stat = fs.readFileSync(file, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11] ?? 0) + Number(f[12] ?? 0);
}

/**
 * CPU seconds of one process's threads other than its main one (user and system): for a node process, V8's
 * helper threads, which compile optimized code and share the collector's work. 0 for a process that has gone.
 */
export function helperThreadCpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`).filter((t) => t !== String(pid));
  } catch {
    return 0;
  }
  let ticks = 0;
  for (const tid of tids) {
    try {
      ticks += statCpuTicks(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      // exited
    }
  }
  return ticks / ticksPerSecond();
}

/** `read` of a process and each of its live children, summed; a process that exits meanwhile counts 0. */
function sumOverTree(pid: number, read: (pid: number) => number): number {
  let sum = 0;
  for (const p of [pid, ...childPids(pid)]) {
    try {
      sum += read(p);
    } catch {
      // exited
    }
  }
  return sum;
}

function childPids(pid: number): number[] {
  try {
    const kids = fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
    return kids.flatMap((k) => [k, ...childPids(k)]);
  } catch {
    return [];
  }
}

/** What a drain has left: messages ready in the queue, and taken but not yet acked (late ack). */
export interface Left {
  ready: number;
  unacked: number;
}

/**
 * Seconds from the first message taken (fewer than `total` ready) until `left` says nothing is ready or
 * unacked; polled every 5 ms, so at most one prefetch window is still in flight when the queue alone is read.
 */
export async function timeDrainOf(
  what: string,
  total: number,
  left: () => Promise<Left>,
  timeoutMs = 600_000,
  onFirstTaken?: () => void,
): Promise<number> {
  const until = Date.now() + timeoutMs;
  let t0: number | undefined;
  for (;;) {
    const { ready, unacked } = await left();
    const now = performance.now();
    if (t0 === undefined && ready < total) {
      t0 = now;
      onFirstTaken?.();
    }
    if (ready === 0 && unacked === 0 && t0 !== undefined) return (now - t0) / 1000;
    if (Date.now() > until) throw new Error(`${what} did not drain`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Time from the first message taken to the RabbitMQ queue running empty, read on one connection: a connection
 * per 5 ms poll would cost the broker more than the consumer it times.
 */
export async function timeDrain(queue: string, total: number, timeoutMs = 600_000): Promise<number> {
  return withChannel((ch) =>
    timeDrainOf(
      `queue ${queue}`,
      total,
      async () => ({ ready: (await ch.checkQueue(queue)).messageCount, unacked: 0 }),
      timeoutMs,
    ),
  );
}

/** A consumer whose drain of `count` messages we observe from outside (it respects its prefetch window): its row. */
export async function observed(
  name: string,
  count: number,
  start: () => ChildProcess,
  drained: () => Promise<number>,
  note: string,
): Promise<Row> {
  const child = start();
  const seconds = await drained();
  // Let the last window finish before sampling memory and stopping.
  await new Promise((r) => setTimeout(r, 500));
  const rssMb = child.pid ? peakRssMb(child.pid) : 0;
  await stop(child);
  return { name, seconds, rate: count / seconds, rssMb, note };
}

/** A consumer that reports its own timing as a `{"seconds":…}` line (it takes everything at once, so the queue says nothing): its row. */
export async function selfTimed(name: string, count: number, start: () => ChildProcess, note: string): Promise<Row> {
  const child = start();
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const timing = () => out.split('\n').find((l) => l.startsWith('{"seconds"'));
  while (!timing()) await once(child.stdout ?? child, 'data');
  const { seconds } = JSON.parse(timing() ?? '{}') as { seconds: number };
  const rssMb = child.pid ? peakRssMb(child.pid) : 0;
  await stop(child);
  return { name, seconds, rate: count / seconds, rssMb, note };
}

export async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export interface Row {
  name: string;
  seconds: number;
  rate: number;
  rssMb: number;
  note?: string;
}

export function table(rows: Row[], baseline: string): string {
  const base = rows.find((r) => r.name === baseline)?.rate ?? 1;
  const lines = [
    `| worker | seconds | tasks/s | × ${baseline} | peak RSS MB | note |`,
    '|---|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.seconds.toFixed(2)} | ${Math.round(r.rate)} | ${(r.rate / base).toFixed(2)} | ${r.rssMb} | ${r.note ?? ''} |`,
    ),
  ];
  return lines.join('\n');
}

export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once the queue has a consumer (a worker that started is consuming). */
export async function consumersUp(queue: string, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const n = await withChannel(async (ch) => (await ch.checkQueue(queue)).consumerCount).catch(() => 0);
    if (n > 0) return;
    if (Date.now() > until) throw new Error(`nothing consumes ${queue}`);
    await sleep(200);
  }
}

/** Resident memory now of a process and all its children (a prefork pool), in MB. */
export function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  const kb = sumOverTree(pid, (p) =>
    Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0),
  );
  return Math.round(kb / 1024);
}

/** Which repetition of `npm run bench` this is (0-based): benchmarks rotate the order of their systems by it. */
export const REPETITION = Number(process.env.BENCH_REPETITION ?? 0);

/**
 * Sends SIGUSR2 to a worker with a probe of ours (wait-probe.ts, heap-probe.ts) and returns the JSON line it
 * then appends to `file`.
 */
export async function askProbe<T>(child: ChildProcess, file: string, timeoutMs = 30_000): Promise<T> {
  const size = () => (fs.existsSync(file) ? fs.statSync(file).size : 0);
  const before = size();
  child.kill('SIGUSR2');
  for (const until = Date.now() + timeoutMs; Date.now() < until;) {
    await sleep(50);
    if (size() === before) continue;
    const text = fs.readFileSync(file).subarray(before).toString('utf8');
    if (text.endsWith('\n')) return JSON.parse(text) as T;
  }
  throw new Error(`process ${child.pid ?? '?'} did not answer its probe in ${file}`);
}
