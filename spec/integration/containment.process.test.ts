/**
 * No task can take the worker down: a real worker process (spec/support/contain-worker-main.ts, the lib worker with
 * the process handlers every main installs) on the shared RabbitMQ, with a queue of its own and the Redis result
 * backend. A task whose timer throws, one whose promise nobody awaits rejects, one whose EventEmitter emits 'error'
 * and one whose file stream fails with no listener each end FAILURE with their result stored while the runs beside them finish SUCCESS and the process
 * stays up; one with an autoretry policy is retried first. An error no task owns: a rejection is counted and the
 * worker goes on; an exception stops the worker warmly, the running tasks finishing, and the process exits 1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { AMQP_URL, REDIS_URL, deleteQueues, publishMany, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { terminate } from '../support/child.js';
import { freePort } from '../support/rabbit-node.js';
import { ResultReader } from '../support/results.js';

const queue = uniqueName('contain');
const redis = new Redis(REDIS_URL);
const results = new ResultReader();
const keys: string[] = [];
let worker: ChildProcess;
let port = 0;
let exit: Promise<number | null>;
let logs = '';

beforeAll(async () => {
  port = await freePort();
  worker = spawn(process.execPath, ['--import', 'tsx', 'spec/support/contain-worker-main.ts', '-Q', queue, '-c', '8'], {
    env: {
      ...process.env,
      CELERY_BROKER_URL: AMQP_URL,
      CELERY_RESULT_BACKEND: REDIS_URL,
      SMARTER_WORKER_HTTP_PORT: String(port),
      SMARTER_WORKER_HTTP_HOST: '127.0.0.1',
      SMARTER_WORKER_SHUTDOWN_GRACE: '30',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
  worker.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  exit = new Promise((resolve) => worker.once('exit', (code) => resolve(code)));
  await waitFor(() => get('/readyz').then((r) => r.status === 200), 60_000, 200);
}, 90_000);

afterAll(async () => {
  await terminate(worker);
  await results.close();
  if (keys.length > 0) await redis.del(...keys.flatMap((k) => [k, `${k}:started`]));
  await redis.quit();
  await deleteQueues([queue, `${queue}.dead_letter`]);
});

const get = (path: string) =>
  fetch(`http://127.0.0.1:${port}${path}`)
    .then(async (r) => ({ status: r.status, text: await r.text() }))
    .catch(() => ({ status: 0, text: '' }));

/** Publishes a task as Celery's protocol 2 does; its id. */
async function send(task: string, kwargs: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  await publishMany(queue, [
    {
      body: JSON.stringify([[], kwargs, { callbacks: null, errbacks: null, chain: null, chord: null }]),
      options: {
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        correlationId: id,
        headers: { lang: 'py', task, id, root_id: id, retries: 0 },
      },
    },
  ]);
  return id;
}

const key = () => {
  const k = uniqueName('contain-key');
  keys.push(k);
  return k;
};

const contained = (text: string, kind: string): number =>
  Number(new RegExp(`^smarter_worker_contained_errors_total\\{kind="${kind}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? -1);

/** Two contain.slow tasks of `ms` each, sent and both started: their ids. */
async function twoStarted(ms: number): Promise<string[]> {
  const slowKey = key();
  const ids = [await send('contain.slow', { key: slowKey, ms }), await send('contain.slow', { key: slowKey, ms })];
  await waitFor(async () => (await redis.hlen(`${slowKey}:started`)) === 2, 30_000);
  return ids;
}

const alive = () => worker.exitCode === null && worker.signalCode === null;

test("own wiring: a timer's throw, an unawaited rejection, an emitter's and a stream's 'error' each fail their own task; the others finish; the process stays up", async () => {
  const slow = await twoStarted(2500);
  const retryKey = key();
  const failing = {
    timer: await send('contain.timer_throw', { message: 'thrown from a timer' }),
    rejection: await send('contain.reject_unawaited', { message: 'rejected, never awaited' }),
    emitter: await send('contain.emitter_error', { message: 'emitted as error' }),
    stream: await send('contain.stream_error', { path: `/nonexistent-${queue}/file` }),
    autoretry: await send('contain.timer_throw_autoretry', { key: retryKey }),
  };

  expect(await results.ready(failing.timer, 30_000)).toMatchObject({
    status: 'FAILURE',
    result: { exc_type: 'ValueError', exc_message: ['thrown from a timer'] },
  });
  expect(await results.ready(failing.rejection, 30_000)).toMatchObject({
    status: 'FAILURE',
    result: { exc_type: 'ValueError', exc_message: ['rejected, never awaited'] },
  });
  expect(await results.ready(failing.emitter, 30_000)).toMatchObject({
    status: 'FAILURE',
    result: { exc_type: 'ValueError', exc_message: ['emitted as error'] },
  });
  const stream = await results.ready(failing.stream, 30_000);
  expect(stream.status).toBe('FAILURE');
  expect(JSON.stringify(stream.result)).toContain('ENOENT');
  // retried once by its policy, then failed for good
  expect(await results.ready(failing.autoretry, 30_000)).toMatchObject({
    status: 'FAILURE',
    result: { exc_type: 'ValueError', exc_message: ['from a timer (retries=1)'] },
  });
  expect(await redis.get(retryKey)).toBe('2');
  for (const id of slow) {
    expect(await results.ready(id, 30_000)).toMatchObject({ status: 'SUCCESS', result: 'finished' });
  }
  expect(alive()).toBe(true);

  const metrics = (await get('/metrics')).text;
  expect(contained(metrics, 'task_uncaught')).toBe(5);
  expect(contained(metrics, 'task_rejection')).toBe(1);
  expect(contained(metrics, 'orphan_uncaught')).toBe(0);
  const health = await get('/healthz');
  expect(health.status).toBe(200);
  expect(health.text).toContain('contained errors since start: task_uncaught 5, task_rejection 1');
  // each logged with the task's name and id
  expect(logs).toContain(`of task contain.timer_throw[${failing.timer}]: the task fails`);
  expect(logs).toContain(`of task contain.reject_unawaited[${failing.rejection}]: the task fails`);
}, 120_000);

test('own wiring: a rejection no task owns is logged and counted, and the worker goes on running tasks', async () => {
  worker.kill('SIGHUP');
  await waitFor(async () => contained((await get('/metrics')).text, 'orphan_rejection') === 1, 15_000);
  expect(logs).toContain('orphan: a rejection no task made');
  const id = await send('contain.slow', { key: key(), ms: 10 });
  expect(await results.ready(id, 30_000)).toMatchObject({ status: 'SUCCESS' });
  expect(alive()).toBe(true);
}, 60_000);

test('own wiring: an exception no task owns: a warm shutdown, the running tasks finish, nothing more is taken, exit code 1', async () => {
  const running = await twoStarted(3000);
  worker.kill('SIGUSR2');
  await waitFor(() => logs.includes('outside any task: warm shutdown'), 15_000);
  // sent once the worker stopped consuming: left in the queue, not taken and dropped
  const late = await send('contain.slow', { key: key(), ms: 10 });
  expect(await exit).toBe(1);
  for (const id of running) expect(await results.meta(id)).toMatchObject({ status: 'SUCCESS', result: 'finished' });
  expect(await results.meta(late)).toBeUndefined();
  const left = await withChannel((ch) => ch.checkQueue(queue));
  expect(left.messageCount).toBe(1);
  expect(logs).toContain('orphan: thrown from a timer no task started');
}, 90_000);
