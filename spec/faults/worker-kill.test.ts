/**
 * SIGKILL of the worker process in the middle of 1,000 tasks, then a new process on the same queue. Late ack:
 * every task completes at least once. Early ack (Celery's default): the runs that had started are lost, as in
 * Celery, and no other task is.
 */
import { type ChildProcess } from 'node:child_process';
import { AMQP_URL, celeryMessage, deleteQueues, publishMany, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';
import { spawnTestWorker } from '../support/spawn-worker.js';

const N = 1000;
const CONCURRENCY = 16;
const redis = runCounter();
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await closeRunCounter();
});

function spawnWorker(queue: string, acksLate: boolean): ChildProcess {
  const child = spawnTestWorker({
    main: 'fault-worker-main',
    queue,
    concurrency: CONCURRENCY,
    env: { CELERY_BROKER_URL: AMQP_URL, FAULT_ACKS_LATE: acksLate ? '1' : '0', CELERY_RESULT_BACKEND: '' },
  });
  children.push(child);
  return child;
}

async function consumers(queue: string): Promise<number> {
  return withChannel(async (ch) => (await ch.checkQueue(queue)).consumerCount).catch(() => 0);
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

function work(key: string, n: number, ms: number) {
  return Array.from({ length: n }, () => celeryMessage('fault.work', { key, ms }));
}

async function run(acksLate: boolean, ms: number, killAfter: number) {
  const queue = uniqueName('kill');
  const key = uniqueName('killwork');
  const first = spawnWorker(queue, acksLate);
  let second: ChildProcess | undefined;
  try {
    await waitFor(async () => (await consumers(queue)) > 0, 30_000, 100);
    await publishMany(queue, work(key, N, ms));
    await waitFor(async () => (await redis.hlen(`${key}:done`)) >= killAfter, 60_000, 10);
    if (!acksLate) {
      // Between two waves of runs (each run lasts `ms`), not in the instant one is acked and not yet marked started.
      const now = await redis.hlen(`${key}:started`);
      await waitFor(async () => (await redis.hlen(`${key}:started`)) > now, 10_000, 5);
      await new Promise((r) => setTimeout(r, ms / 2));
    }
    await kill(first);
    const started = await redis.hkeys(`${key}:started`);
    const doneAtKill = new Set(await redis.hkeys(`${key}:done`));
    const interrupted = started.filter((id) => !doneAtKill.has(id));
    second = spawnWorker(queue, acksLate);
    return { queue, key, second, doneAtKill: doneAtKill.size, interrupted };
  } catch (err) {
    await kill(first);
    throw err;
  }
}

async function cleanup(r: { queue: string; key: string; second: ChildProcess }): Promise<void> {
  await kill(r.second);
  await deleteQueues([r.queue, `${r.queue}.dead_letter`]);
  await redis.del(`${r.key}:started`, `${r.key}:done`);
}

test(`own wiring: late ack: SIGKILL during ${N} tasks (-c ${CONCURRENCY}), restart: all ${N} complete at least once, 0 lost`, async () => {
  const r = await run(true, 20, 300);
  try {
    await waitFor(async () => (await redis.hlen(`${r.key}:done`)) >= N, 120_000, 50);
    await waitFor(
      async () => (await withChannel(async (ch) => (await ch.checkQueue(r.queue)).messageCount)) === 0,
      10_000,
    );
    const counts = Object.values(await redis.hgetall(`${r.key}:done`)).map(Number);
    const runs = counts.reduce((a, b) => a + b, 0);
    process.stdout.write(
      `late ack: published ${N}, done before the kill ${r.doneAtKill}, interrupted ${r.interrupted.length}, completed ${counts.length}, runs ${runs} (duplicates ${runs - counts.length}), lost ${N - counts.length}\n`,
    );
    expect(counts.length).toBe(N);
    // A duplicate is a run that completed but whose ack died with the process: at most the prefetched window.
    expect(runs - counts.length).toBeLessThanOrEqual(CONCURRENCY * 4);
  } finally {
    await cleanup(r);
  }
}, 180_000);

test(`own wiring: early ack: SIGKILL during ${N} tasks (-c ${CONCURRENCY}), restart: lost = the runs started and not finished (≤ ${CONCURRENCY}), every other task completes once`, async () => {
  const r = await run(false, 200, 200);
  try {
    const expected = N - r.interrupted.length;
    await waitFor(async () => (await redis.hlen(`${r.key}:done`)) >= expected, 120_000, 50);
    await new Promise((res) => setTimeout(res, 1000));
    const done = await redis.hgetall(`${r.key}:done`);
    const counts = Object.values(done).map(Number);
    const runs = counts.reduce((a, b) => a + b, 0);
    process.stdout.write(
      `early ack: published ${N}, done before the kill ${r.doneAtKill}, running at the kill ${r.interrupted.length}, completed ${counts.length}, runs ${runs}, lost ${N - counts.length}\n`,
    );
    expect(r.interrupted.length).toBeGreaterThan(0);
    expect(r.interrupted.length).toBeLessThanOrEqual(CONCURRENCY);
    expect(counts.length).toBe(expected);
    expect(r.interrupted.filter((id) => id in done)).toEqual([]);
    expect(runs).toBe(counts.length);
    expect(await withChannel(async (ch) => (await ch.checkQueue(r.queue)).messageCount)).toBe(0);
  } finally {
    await cleanup(r);
  }
}, 180_000);
