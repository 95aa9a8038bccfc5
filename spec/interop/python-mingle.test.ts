/**
 * Mingle with a real Python Celery 5.2.6 worker on Redis (celery/worker/consumer/mingle.py): a Python worker
 * started after one of ours revoked a task learns the revoke from our `hello` reply (its LimitedSet takes only
 * float timestamps), and a worker of ours started after a revoke only the Python worker holds learns it and
 * discards the task.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { REDIS_URL, uniqueName } from '../support/amqp.js';
import { WITH_MINGLE } from '../support/harness.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { ResultReader } from '../support/results.js';
import { waitFor } from '../support/wait.js';
import { PYTHON, redisappCelery } from '../support/python-worker.js';

let holder: RedisHarness;
let late: RedisHarness | undefined;
let py: ChildProcess | undefined;
const results = new ResultReader();

const celery = (...args: string[]) => redisappCelery(REDIS_URL, holder.pythonEnv, ...args);

beforeAll(async () => {
  holder = await startRedisWorker();
}, 60_000);
afterAll(async () => {
  if (py && py.exitCode === null) py.kill('SIGKILL');
  await late?.app.shutdown();
  await holder.stop();
  await results.close();
});

test('own wiring: a Python worker learns our revokes at start, and ours learns a revoke only the Python worker holds and discards the task', async () => {
  const ours = randomUUID();
  const theirs = randomUUID();
  holder.worker.revokeTasks([ours], false);
  const pyNode = `py-${randomUUID().slice(0, 6)}@mingle`;
  py = spawn(
    PYTHON,
    ['-m', 'celery', '-A', 'pyworker', 'worker', '-Q', uniqueName('pyq'), '--pool', 'solo', '-l', 'info', '-n', pyNode],
    {
      cwd: 'spec/interop/python',
      env: { ...process.env, CELERY_BROKER_URL: REDIS_URL, CELERY_RESULT_BACKEND: REDIS_URL, ...holder.pythonEnv },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  py.stderr?.on('data', (b: Buffer) => (log += b.toString()));
  await waitFor(() => /ready\./.test(log), 45_000, { stepMs: 200, what: () => `the Python worker's start:\n${log}` });
  expect(log).toMatch(/mingle: sync with 1 nodes/);
  expect(JSON.parse(await celery('inspect', 'revoked', '-d', pyNode, '-j'))).toEqual({ [pyNode]: [ours] });

  await celery('control', 'revoke', theirs, '-d', pyNode);
  const queue = uniqueName('rqmingle');
  late = await startRedisWorker({ scope: holder.scope, queue, env: WITH_MINGLE });
  expect(late.worker.revoked.has(theirs)).toBe(true);
  expect(late.worker.revoked.has(ours)).toBe(true);
  await late.worker.publisher.apply('test.add', [1, 2], {}, { queue, taskId: theirs });
  expect((await results.ready(theirs)).status).toBe('REVOKED');
}, 120_000);
