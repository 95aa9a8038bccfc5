/**
 * The Redis result backend (a redis-server of the test's own) stopped and started again while 1,000 tasks run
 * on the shared RabbitMQ: the results of the runs that ended while it was down are written once it is back, and
 * no task fails because of it.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { publishMany, uniqueName, waitFor, withChannel } from '../support/amqp.js';
import { faultTasks } from '../support/fault-tasks.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type RedisNode, startRedisNode } from '../support/redis-node.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

const N = 1000;
const OUTAGE_MS = Number(process.env.FAULT_REDIS_OUTAGE_MS ?? 3000);
const counter = runCounter();
let backend: RedisNode;
let h: Harness;
let reader: Redis;

beforeAll(async () => {
  backend = await startRedisNode();
  reader = new Redis(backend.url, { maxRetriesPerRequest: null });
  reader.on('error', () => undefined);
  h = await startWorker({ tasks: (q) => faultTasks(q), env: { CELERY_RESULT_BACKEND: backend.url, CELERY_WORKER_CONCURRENCY: '16' } });
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

test(`${N} tasks, the result backend down ${OUTAGE_MS / 1000} s midway: ${N} SUCCESS results stored, 0 failed, 0 dead-lettered`, async () => {
  const key = uniqueName('backend');
  const ids = Array.from({ length: N }, () => randomUUID());
  try {
    await publishMany(
      h.queue,
      ids.map((id) => ({
        body: JSON.stringify([[], { key, ms: 50 }, {}]),
        options: { contentType: 'application/json', contentEncoding: 'utf-8', correlationId: id, headers: { lang: 'py', task: 'fault.work', id, root_id: id, retries: 0 } },
      })),
    );
    await waitFor(async () => (await counter.hlen(`${key}:done`)) >= 200, 60_000, 10);
    await backend.stop();
    const downAt = await counter.hlen(`${key}:done`);
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const duringOutage = (await counter.hlen(`${key}:done`)) - downAt;
    await backend.start();
    await waitFor(async () => (await statuses(ids)).get('SUCCESS') === N, 60_000, 200).catch(() => undefined); // the counts below say what is missing
    const byStatus = await statuses(ids);
    const dead = await withChannel(async (ch) => (await ch.checkQueue(`${h.queue}.dead_letter`)).messageCount).catch(() => 0);
    process.stdout.write(`redis backend restart: published ${N}, ran while it was down ${duringOutage}, results ${JSON.stringify(Object.fromEntries(byStatus))}, dead-lettered ${dead}\n`);
    expect(duringOutage).toBeGreaterThan(0);
    expect(byStatus.get('SUCCESS')).toBe(N);
    expect(dead).toBe(0);
  } finally {
    await counter.del(`${key}:started`, `${key}:done`);
  }
}, 120_000);
