/**
 * Remote control and events seen from Debian's real `celery` CLI and kombu: ping, inspect, status,
 * revoke with terminate, task events, worker-offline; bad control messages answered or dropped.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { AMQP_URL, REDIS_URL } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { type Harness, startWorker } from '../support/harness.js';
import { ResultReader } from '../support/results.js';
import { PYTHON } from '../support/python-worker.js';

const exec = promisify(execFile);
const celery = async (...args: string[]) =>
  (await exec(PYTHON, ['-m', 'celery', '-b', AMQP_URL, ...args], { timeout: 60_000 })).stdout;

let h: Harness;
let node: string;
const results = new ResultReader();
beforeAll(async () => {
  h = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL, CELERY_WORKER_SEND_TASK_EVENTS: 'true' } });
  node = h.worker.options.nodeName;
});
afterAll(async () => {
  await h.stop();
  await results.close();
});

test('own wiring: celery inspect ping -d <node> gets pong', async () => {
  const out = JSON.parse(await celery('inspect', 'ping', '-d', node, '-j')) as Record<string, unknown>;
  expect(out).toEqual({ [node]: { ok: 'pong' } });
});

test('own wiring: celery inspect registered lists our tasks (not the celery.* built-ins)', async () => {
  const out = JSON.parse(await celery('inspect', 'registered', '-d', node, '-j')) as Record<string, string[]>;
  expect(out[node]).toEqual(expect.arrayContaining(['test.add', 'test.sleep']));
  expect(out[node]?.some((n) => n.startsWith('celery.'))).toBe(false);
});

test('own wiring: celery inspect stats, active_queues and conf answer in the shapes Flower reads', async () => {
  const stats = (
    JSON.parse(await celery('inspect', 'stats', '-d', node, '-j')) as Record<string, Record<string, unknown>>
  )[node];
  expect(stats).toMatchObject({
    pid: process.pid,
    pool: { 'max-concurrency': 4 },
    prefetch_count: 16,
    broker: { transport: 'amqp' },
  });
  const queues = (
    JSON.parse(await celery('inspect', 'active_queues', '-d', node, '-j')) as Record<string, Array<{ name: string }>>
  )[node];
  expect(queues?.map((q) => q.name)).toEqual([h.queue]);
  const conf = await celery('inspect', 'conf', '-d', node, '-j');
  expect(conf).not.toContain('guest:guest');
});

test('own wiring: celery control terminate stops a running task; its result is REVOKED', async () => {
  const id = await h.worker.publisher.apply('test.sleep', [30], {});
  await waitFor(() => [...h.worker.active.values()].some((r) => r.msg.id === id), 10_000);
  const active = JSON.parse(await celery('inspect', 'active', '-d', node, '-j')) as Record<
    string,
    Array<{ id: string }>
  >;
  expect(active[node]?.map((t) => t.id)).toContain(id);
  await celery('control', 'terminate', 'SIGTERM', id, '-d', node);
  expect(await results.ready(id, 10_000)).toMatchObject({
    status: 'REVOKED',
    result: { exc_type: 'TaskRevokedError', exc_message: ['terminated'] },
  });
  const revoked = JSON.parse(await celery('inspect', 'revoked', '-d', node, '-j')) as Record<string, string[]>;
  expect(revoked[node]).toContain(id);
});

test('own wiring: a kombu event receiver sees task-received, task-started and task-succeeded with uuid, name and runtime', async () => {
  const py = spawn(PYTHON, ['spec/interop/python/events.py', AMQP_URL, '4'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  py.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(() => out.includes('listening'), 15_000);
  const id = await h.worker.publisher.apply('test.add', [2, 2], {});
  await new Promise((r) => py.once('exit', r));
  const events = JSON.parse(out.split('\n').filter(Boolean).pop() ?? '[]') as Array<Record<string, unknown>>;
  const mine = events.filter((e) => e.uuid === id);
  expect(mine.map((e) => e.type)).toEqual(['task-received', 'task-started', 'task-succeeded']);
  expect(mine[0]).toMatchObject({ name: 'test.add', args: '(2, 2)', hostname: node });
  expect(mine[2]).toMatchObject({ result: '4' });
  expect(typeof mine[2]?.runtime).toBe('number');
  expect(events.some((e) => e.type === 'worker-heartbeat' && e.hostname === node)).toBe(true);
});

test('own wiring: an unknown command gets KeyError; malformed and reply-less requests are dropped; the worker still answers', async () => {
  const code = `
import json, sys
from celery import Celery
app = Celery(broker=sys.argv[1])
print(json.dumps(app.control.broadcast('frobnicate', reply=True, destination=[sys.argv[2]], timeout=2)))`;
  const { stdout } = await exec(PYTHON, ['-c', code, AMQP_URL, node]);
  expect(JSON.parse(stdout)).toEqual([{ [node]: { error: "KeyError('frobnicate')" } }]);
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createConfirmChannel();
  ch.publish('celery.pidbox', '', Buffer.from('{not json'), { contentType: 'application/json' });
  ch.publish(
    'celery.pidbox',
    '',
    Buffer.from(JSON.stringify({ method: 'ping', arguments: {}, ticket: randomUUID() })),
    { contentType: 'application/json' },
  );
  ch.publish('celery.pidbox', '', Buffer.from(JSON.stringify({ arguments: {} })), { contentType: 'application/json' });
  await ch.waitForConfirms();
  await conn.close();
  const out = JSON.parse(await celery('inspect', 'ping', '-d', node, '-j')) as Record<string, unknown>;
  expect(out).toEqual({ [node]: { ok: 'pong' } });
});

test('own wiring: celery status lists our worker, and no longer does after it shut down', async () => {
  const other = await startWorker({});
  const otherNode = other.worker.options.nodeName;
  expect(await celery('status')).toContain(otherNode);
  await other.stop();
  const after = await celery('status').catch((err: { stdout?: string }) => err.stdout ?? '');
  expect(after).not.toContain(otherNode);
});

test('own wiring: celery control rate_limit and time_limit change a task at run time', async () => {
  expect(await celery('control', 'rate_limit', 'test.add', '2/s', '-d', node)).toContain(
    'new rate limit set successfully',
  );
  const t0 = Date.now();
  const ids = await Promise.all([1, 2, 3].map((i) => h.worker.publisher.apply('test.add', [i, i], {})));
  for (const id of ids) await results.ready(id);
  const last = Math.max(
    ...(await Promise.all(ids.map(async (id) => Date.parse(String((await results.ready(id)).date_done))))),
  );
  expect(last - t0).toBeGreaterThanOrEqual(900);
  expect(await celery('control', 'rate_limit', 'test.nope', '1/s', '-d', node)).toContain('unknown task');

  expect(await celery('control', 'time_limit', 'test.sleep', '0.3', '10', '-d', node)).toContain(
    'time limits set successfully',
  );
  const slow = await h.worker.publisher.apply('test.sleep', [3], {});
  expect((await results.ready(slow)).result).toMatchObject({ exc_type: 'SoftTimeLimitExceeded' });
});

test('own wiring: with a state file, revoked ids survive a restart: the revoked task is discarded by the next worker', async () => {
  const stateDb = `/tmp/smarter-worker-test-${randomUUID()}.state`;
  const first = await startWorker({ env: { CELERY_RESULT_BACKEND: REDIS_URL, CELERY_WORKER_STATE_DB: stateDb } });
  const id = randomUUID();
  await celery('control', 'revoke', id, '-d', first.worker.options.nodeName);
  await waitFor(() => first.worker.revoked.has(id), 5000);
  const queue = first.queue;
  await first.app.shutdown();
  const second = await startWorker({
    queue,
    env: { CELERY_RESULT_BACKEND: REDIS_URL, CELERY_WORKER_STATE_DB: stateDb },
  });
  try {
    await second.worker.publisher.apply('test.add', [1, 1], {}, { taskId: id });
    expect(await results.ready(id)).toMatchObject({ status: 'REVOKED', result: { exc_message: ['revoked'] } });
  } finally {
    await second.stop();
  }
});
