/**
 * `celery inspect query_task` and `celery inspect conf` from Debian's real Celery 5.2.6 CLI, answered as
 * Celery's worker/control.py answers them: query_task gives {id: [state, request info]} for the ids the
 * worker holds (an unknown id is left out); conf gives Celery's lowercase setting names, only what differs
 * from the defaults unless asked, with the broker and backend passwords masked.
 */
import { randomUUID } from 'node:crypto';
import { AMQP_URL, REDIS_URL } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { redisappCelery } from '../support/python-worker.js';

let h: RedisHarness;
let a: Harness;
beforeAll(async () => {
  h = await startRedisWorker();
  a = await startWorker({
    env: { CELERY_RESULT_BACKEND: 'redis://:backend-secret@127.0.0.1:6379/0', CELERY_WORKER_PREFETCH_MULTIPLIER: '2' },
  });
}, 60_000);
afterAll(async () => {
  await h.stop();
  await a.stop();
});

test('own wiring: celery inspect query_task: active, reserved and held tasks with their state and request info; an unknown id left out', async () => {
  const node = h.worker.options.nodeName;
  // Concurrency 4: four sleeps run, the fifth waits for a slot (reserved).
  const sleeps: string[] = [];
  for (let i = 0; i < 5; i++) {
    sleeps.push(await h.worker.publisher.apply('test.sleep', [], { seconds: 30 }, { queue: h.queue }));
  }
  const held = await h.worker.publisher.apply('test.add', [1, 2], {}, { queue: h.queue, countdown: 4 });
  await waitFor(() =>
    h.worker.active.size === 4 && h.worker.reservedMessages().length === 1 && h.worker.heldMessages().length === 1
      ? true
      : undefined,
  );
  const active = sleeps[0] ?? '';
  const reserved = h.worker.reservedMessages()[0]?.id ?? '';
  const out = JSON.parse(
    await redisappCelery(
      REDIS_URL,
      h.pythonEnv,
      'inspect',
      'query_task',
      active,
      reserved,
      held,
      randomUUID(),
      '-d',
      node,
      '-j',
    ),
  ) as Record<string, Record<string, [string, Record<string, unknown>]>>;
  const mine = out[node] ?? {};
  expect(Object.keys(mine).sort()).toEqual([active, reserved, held].sort());
  expect(mine[active]?.[0]).toBe('active');
  expect(mine[active]?.[1]).toMatchObject({
    id: active,
    name: 'test.sleep',
    type: 'test.sleep',
    kwargs: { seconds: 30 },
    hostname: node,
    worker_pid: process.pid,
  });
  expect(mine[active]?.[1].time_start).toEqual(expect.any(Number));
  expect(mine[reserved]).toEqual([
    'reserved',
    expect.objectContaining({ id: reserved, name: 'test.sleep', time_start: null }),
  ]);
  expect(mine[held]).toEqual([
    'scheduled',
    expect.objectContaining({ id: held, name: 'test.add', args: [1, 2], time_start: null }),
  ]);
  h.worker.revokeTasks(sleeps, true);
}, 60_000);

test('own wiring: celery inspect conf: Celery names, only what differs from the defaults, broker and backend passwords masked; with_defaults adds the rest', async () => {
  const node = a.worker.options.nodeName;
  const conf =
    (
      JSON.parse(await redisappCelery(AMQP_URL, {}, 'inspect', 'conf', '-d', node, '-j')) as Record<
        string,
        Record<string, unknown>
      >
    )[node] ?? {};
  expect(conf).toMatchObject({
    broker_url: 'amqp://guest:********@127.0.0.1:5672//',
    result_backend: 'redis://:********@127.0.0.1:6379/0',
    worker_concurrency: 4,
    worker_prefetch_multiplier: 2,
    worker_hostname: `${a.queue}@%h`,
  });
  expect(Object.keys(conf).every((k) => /^[a-z0-9_]+$/.test(k))).toBe(true);
  expect(conf).not.toHaveProperty('task_acks_late');
  expect(JSON.stringify(conf)).not.toMatch(/guest@|backend-secret/);
  const all =
    (
      JSON.parse(await redisappCelery(AMQP_URL, {}, 'inspect', 'conf', 'true', '-d', node, '-j')) as Record<
        string,
        Record<string, unknown>
      >
    )[node] ?? {};
  expect(all).toMatchObject({
    task_acks_late: false,
    accept_content: ['json'],
    broker_url: 'amqp://guest:********@127.0.0.1:5672//',
  });
}, 60_000);
