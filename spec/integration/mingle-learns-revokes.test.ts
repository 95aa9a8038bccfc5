/**
 * Celery's mingle at start (celery/worker/consumer/mingle.py), on both brokers: a worker started after a
 * revoke asks the running workers for their revoked ids before it consumes, so it discards the revoked task,
 * and on Redis a revoked countdown parked in the delayed set, where it would otherwise run it.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { type Harness, WITH_MINGLE, startWorker } from '../support/harness.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { REDIS_URL, uniqueName } from '../support/amqp.js';
import { ResultReader } from '../support/results.js';

let results: ResultReader;
const stops: Array<() => Promise<void>> = [];
beforeEach(() => {
  results = new ResultReader();
});
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await results.close();
});

/** A Redis worker (with mingle) stopped after the test. */
async function redisWorker(opts: NonNullable<Parameters<typeof startRedisWorker>[0]> = {}): Promise<RedisHarness> {
  const h = await startRedisWorker({ ...opts, env: { ...WITH_MINGLE, ...opts.env } });
  stops.push(() => h.stop());
  return h;
}

/** A running Redis worker that has revoked one id, and a second one started after it on the same key prefix. */
async function revokedThenLate(
  queue: string,
  lateEnv: Record<string, string> = {},
): Promise<{ holder: RedisHarness; late: RedisHarness; revoked: string }> {
  const holder = await redisWorker();
  const revoked = randomUUID();
  holder.worker.revokeTasks([revoked], false);
  const late = await redisWorker({ scope: holder.scope, queue, env: lateEnv });
  return { holder, late, revoked };
}

test('own wiring: Redis: a worker started after a revoke learns it from a running worker and discards the task and the revoked parked countdown', async () => {
  const holder = await redisWorker();
  const revoked = randomUUID();
  const parked = randomUUID();
  const kept = randomUUID();
  const queue = uniqueName('rqlate');
  // Parked in the delayed set (beyond the 5 s hold), for a queue only the late worker consumes.
  await holder.worker.publisher.apply('test.add', [1, 2], {}, { queue, countdown: 7, taskId: parked });
  expect(await holder.scope.redis.zcard(holder.scope.keys.delayed)).toBe(1);
  holder.worker.revokeTasks([revoked, parked], false);

  const late = await redisWorker({ scope: holder.scope, queue });
  expect(late.worker.revoked.has(revoked)).toBe(true);
  expect(late.worker.revoked.has(parked)).toBe(true);
  await late.worker.publisher.apply('test.add', [1, 2], {}, { queue, taskId: revoked });
  await late.worker.publisher.apply('test.add', [2, 2], {}, { queue, taskId: kept });
  expect((await results.ready(revoked)).status).toBe('REVOKED');
  expect((await results.ready(kept)).result).toBe(4);
  // The countdown falls due 7 s after it was sent; the late worker is the only consumer of its queue.
  expect((await results.ready(parked, 30_000)).status).toBe('REVOKED');
  expect(late.worker.counters().processed.get('test.add')).toBe(1);
}, 60_000);

test('own wiring: RabbitMQ: a worker started after a revoke learns it from a running worker and discards the task', async () => {
  const env = { CELERY_RESULT_BACKEND: REDIS_URL, ...WITH_MINGLE };
  const holder: Harness = await startWorker({ env });
  stops.push(() => holder.stop());
  const revoked = randomUUID();
  const kept = randomUUID();
  holder.worker.revokeTasks([revoked], false);
  const late = await startWorker({ env });
  stops.push(() => late.stop());
  expect(late.worker.revoked.has(revoked)).toBe(true);
  await late.worker.publisher.apply('test.add', [1, 2], {}, { queue: late.queue, taskId: revoked });
  await late.worker.publisher.apply('test.add', [2, 2], {}, { queue: late.queue, taskId: kept });
  expect((await results.ready(revoked)).status).toBe('REVOKED');
  expect((await results.ready(kept)).result).toBe(4);
}, 60_000);

test('own wiring: --without-mingle: the late worker asks nobody and runs the revoked task (Celery without mingle)', async () => {
  const queue = uniqueName('rqlone');
  const { late, revoked } = await revokedThenLate(queue, { SMARTER_WORKER_WITHOUT_MINGLE: 'true' });
  expect(late.worker.revoked.has(revoked)).toBe(false);
  await late.worker.publisher.apply('test.add', [1, 2], {}, { queue, taskId: revoked });
  expect((await results.ready(revoked)).result).toBe(3);
}, 60_000);

test('own wiring: with SMARTER_WORKER_CONTROL=inspect (revoke refused) a worker takes no revokes from hello, at start or answering, since they would bypass the policy', async () => {
  const { holder, late, revoked } = await revokedThenLate(uniqueName('rqinspect'), {
    SMARTER_WORKER_CONTROL: 'inspect',
  });
  expect(late.worker.revoked.has(revoked)).toBe(false);
  // A third worker's start-up hello offers its revokes (from its state file): the locked-down worker refuses them, the other takes them.
  const fromFile = randomUUID();
  const stateDb = `/tmp/smarter-worker-test-${randomUUID()}.state`;
  fs.writeFileSync(stateDb, JSON.stringify({ revoked: { [fromFile]: Date.now() } }));
  stops.push(async () => fs.rmSync(stateDb, { force: true }));
  const third = await redisWorker({
    scope: holder.scope,
    queue: uniqueName('rqthird'),
    env: { CELERY_WORKER_STATE_DB: stateDb },
  });
  expect(third.worker.revoked.has(revoked)).toBe(true);
  expect(holder.worker.revoked.has(fromFile)).toBe(true);
  expect(late.worker.revoked.has(fromFile)).toBe(false);
}, 60_000);
