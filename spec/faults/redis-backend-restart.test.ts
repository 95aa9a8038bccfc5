/**
 * The Redis result backend (a redis-server of the test's own) stopped and started again while 1,000 tasks run
 * on the shared RabbitMQ: the results of the runs that ended while it was down are written once it is back, and
 * no task fails because of it. A run waits for its result to be stored, as long as the Redis client retries
 * (ioredis, 20 reconnection attempts: about 10 s); an outage longer than that loses the results of the runs
 * that were waiting (each logged), as Celery's backend does after its own retries (about 20 s). The second test
 * states that limit.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { celeryMessage, publishMany, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { faultTasks } from '../support/fault-tasks.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type RedisNode, startRedisNode } from '../support/redis-node.js';
import { recordingLogger } from '../support/logs.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

const N = 1000;
const OUTAGE_MS = 3000;
const LONG_OUTAGE_MS = 15_000;
const CONCURRENCY = 16;
const logger = recordingLogger();
const counter = runCounter();
let backend: RedisNode;
let h: Harness;
let reader: Redis;

beforeAll(async () => {
  backend = await startRedisNode();
  reader = new Redis(backend.url, { maxRetriesPerRequest: null });
  reader.on('error', () => undefined);
  h = await startWorker({
    logger,
    tasks: (q) => faultTasks(q),
    env: { CELERY_RESULT_BACKEND: backend.url, CELERY_WORKER_CONCURRENCY: String(CONCURRENCY) },
  });
}, 60_000);

afterAll(async () => {
  await h.stop();
  reader.disconnect();
  await backend.remove();
  await closeRunCounter();
});

async function statuses(ids: string[]): Promise<Map<string, number>> {
  const byStatus = new Map<string, number>();
  const values = await reader.mget(ids.map((id) => `celery-task-meta-${id}`));
  for (const v of values) {
    const s = v === null ? 'missing' : String((JSON.parse(v) as { status?: unknown }).status);
    byStatus.set(s, (byStatus.get(s) ?? 0) + 1);
  }
  return byStatus;
}

async function outage(ms: number) {
  const key = uniqueName('backend');
  const ids: string[] = Array.from({ length: N }, () => randomUUID());
  try {
    await publishMany(
      h.queue,
      ids.map((id) => celeryMessage('fault.work', { key, ms: 50 }, id)),
    );
    await waitFor(async () => (await counter.hlen(`${key}:done`)) >= 200, 60_000, 10);
    await backend.stop();
    const downAt = await counter.hlen(`${key}:done`);
    await new Promise((r) => setTimeout(r, ms));
    const duringOutage = (await counter.hlen(`${key}:done`)) - downAt;
    // Runs that are over but still wait to store their result: they go on once it is back.
    const waiting = h.worker.active.size;
    await backend.start();
    await waitFor(async () => (await counter.hlen(`${key}:done`)) >= N, 60_000, 100);
    // Every run is over; its result is stored, or given up on (logged).
    await waitFor(async () => h.worker.active.size === 0, 30_000, 100);
    const byStatus = await statuses(ids);
    const dead = await withChannel(async (ch) => (await ch.checkQueue(`${h.queue}.dead_letter`)).messageCount).catch(
      () => 0,
    );
    const missing = new Set(ids);
    for (const [i, v] of (await reader.mget(ids.map((id) => `celery-task-meta-${id}`))).entries()) {
      if (v !== null) missing.delete(ids[i] ?? '');
    }
    const unstored = logger.lines.filter(
      (l) =>
        l.level === 'error' &&
        l.message.startsWith('could not store SUCCESS') &&
        ids.some((id) => l.message.includes(id)),
    );
    process.stdout.write(
      `redis backend down ${ms / 1000} s: published ${N}, ended while it was down ${duringOutage}, waiting for it at the restart ${waiting}, results ${JSON.stringify(Object.fromEntries(byStatus))}, logged as not stored ${unstored.length}, dead-lettered ${dead}\n`,
    );
    return { byStatus, dead, waiting, missing, unstored };
  } finally {
    await counter.del(`${key}:started`, `${key}:done`);
  }
}

test(`own wiring: ${N} tasks, the result backend down ${OUTAGE_MS / 1000} s midway: ${N} SUCCESS results stored, 0 failed, 0 dead-lettered`, async () => {
  const r = await outage(OUTAGE_MS);
  expect(r.waiting).toBeGreaterThan(0);
  expect(r.byStatus.get('SUCCESS')).toBe(N);
  expect(r.unstored).toEqual([]);
  expect(r.dead).toBe(0);
}, 120_000);

test(`own wiring: ${N} tasks, the result backend down ${LONG_OUTAGE_MS / 1000} s (longer than Celery's ~20 retries of a result): ${N} SUCCESS results stored, 0 failed, 0 dead-lettered`, async () => {
  // The backend tries each result for about 80 s (STORE_TRIES); with 20 tries (~10 s) this lost the results of
  // the runs waiting through the outage.
  const r = await outage(LONG_OUTAGE_MS);
  expect(r.waiting).toBeGreaterThan(0);
  expect(r.byStatus.get('SUCCESS')).toBe(N);
  expect(r.unstored).toEqual([]);
  expect(r.byStatus.get('FAILURE') ?? 0).toBe(0);
  expect(r.dead).toBe(0);
}, 150_000);
