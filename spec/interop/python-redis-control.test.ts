/**
 * Remote control and events on a Redis broker, seen from Debian's real `celery` CLI: the pidbox broadcast
 * over pub/sub reaches our worker and its replies come back through `reply.celery.pidbox`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REDIS_URL } from '../support/redis.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { waitFor } from '../support/wait.js';
import { PYTHON, redisappCelery } from '../support/python-worker.js';

const exec = promisify(execFile);

let h: RedisHarness;
let node: string;
const celery = (...args: string[]) => redisappCelery(REDIS_URL, h.pythonEnv, ...args);

beforeAll(async () => {
  h = await startRedisWorker({ env: { CELERY_WORKER_SEND_TASK_EVENTS: 'true' } });
  node = h.worker.options.nodeName;
}, 60_000);
afterAll(async () => h.stop());

test('own wiring: celery inspect ping -d <node> gets pong over Redis', async () => {
  expect(JSON.parse(await celery('inspect', 'ping', '-d', node, '-j'))).toEqual({ [node]: { ok: 'pong' } });
}, 60_000);

test('own wiring: celery inspect registered lists our tasks', async () => {
  const out = JSON.parse(await celery('inspect', 'registered', '-d', node, '-j')) as Record<string, string[]>;
  expect(out[node]).toEqual(expect.arrayContaining(['test.add', 'test.sleep']));
}, 60_000);

test('own wiring: celery inspect stats answers, naming the redis transport', async () => {
  const stats = (
    JSON.parse(await celery('inspect', 'stats', '-d', node, '-j')) as Record<string, Record<string, unknown>>
  )[node];
  expect(stats).toMatchObject({ pid: process.pid, pool: { 'max-concurrency': 4 }, broker: { transport: 'redis' } });
}, 60_000);

test('own wiring: a kombu event receiver on celeryev sees our task events', async () => {
  const listen = exec(
    PYTHON,
    ['spec/interop/python/kombu_redis.py', REDIS_URL, h.scope.prefix, 'listen', 'celeryev', 'task.#'],
    { timeout: 30_000 },
  );
  // kombu subscribes at its first poll, once its process has started: the events of a task sent before then reach
  // no one. A task is sent every half second until the receiver, which exits on the first message it hears, is done.
  let done = false;
  const over = () => (done = true);
  void listen.then(over, over);
  const ids: string[] = [];
  await waitFor(
    async () => {
      if (done) return true;
      ids.push(await h.worker.publisher.apply('test.add', [1, 2], {}));
      return false;
    },
    25_000,
    { stepMs: 500, what: 'a task event heard by the receiver' },
  );
  const got = JSON.parse((await listen).stdout.trim().split('\n').pop() ?? 'null') as {
    body: Array<Record<string, unknown>>;
    delivery_info: Record<string, unknown>;
  };
  // Task events are buffered as Celery's worker buffers them: a list, routed task.multi.
  expect(got.delivery_info).toMatchObject({ exchange: 'celeryev', routing_key: 'task.multi' });
  expect(String(got.body[0]?.type)).toMatch(/^task-/);
  expect(ids).toContain(got.body[0]?.uuid);
}, 60_000);
