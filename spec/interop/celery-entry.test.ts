/**
 * Smarter's own commands against this image's `celery` (bin/celery.ts): the worker command of its chart
 * (helm/charts/smarter/templates/deployment-worker.yaml: `celery -A smarter.workers.celery.app worker
 * --concurrency=5 --loglevel=info -Q default_celery_task_queue -E`; here on a queue and node name of the
 * test's own, the broker being shared), its liveness probe `pgrep -f 'celery.*worker'`, and the healthcheck of
 * its docker-compose.yml, `celery -A smarter.workers.celery.app inspect ping`; Debian's Python `celery
 * control` drives the pool (pool_grow, pool_shrink, autoscale, pool_restart); and recycling by task count and
 * by memory replaces the worker with 0 tasks lost and 0 run twice.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { encodeTaskMessage } from '../../lib/protocol/encode.js';
import { AMQP_URL, deleteQueues, publishMany, uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { terminate } from '../support/child.js';
import { PYTHON } from '../support/python-worker.js';

const exec = promisify(execFile);
const ENV = { ...process.env, CELERY_BROKER_URL: AMQP_URL, SMARTER_WORKER_HTTP_PORT: '0' };

interface Started {
  child: ChildProcess;
  node: string;
  queue: string;
  out: () => string;
}

const started: Started[] = [];

function startCelery(args: string[], queue: string, node: string): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/celery.ts', ...args], {
    env: ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (b: Buffer) => (text += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (text += b.toString()));
  const s = { child, node, queue, out: () => text };
  started.push(s);
  return s;
}

const ready = (s: Started) => waitFor(() => s.out().includes(`worker ${s.node} ready`), 60_000, 100);

const pyCelery = async (...args: string[]) =>
  (await exec(PYTHON, ['-m', 'celery', '-b', AMQP_URL, ...args], { timeout: 60_000 })).stdout;

const ourCelery = (...args: string[]) =>
  exec(process.execPath, ['--import', 'tsx', 'bin/celery.ts', ...args], { env: ENV, timeout: 60_000 });

async function send(queue: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  await publishMany(
    queue,
    ids.map((id) => {
      const m = encodeTaskMessage({ id, task: 'celery.accumulate', args: [id], kwargs: {} });
      return {
        body: m.body,
        options: {
          contentType: m.properties.contentType,
          contentEncoding: m.properties.contentEncoding,
          headers: m.properties.headers,
          deliveryMode: 2,
        },
      };
    }),
  );
  return ids;
}

/** How many times each id ran, from the worker's own log lines. */
function runsOf(s: Started, ids: readonly string[]): number[] {
  return ids.map((id) => s.out().split(`celery.accumulate[${id}] succeeded`).length - 1);
}

afterAll(async () => {
  for (const s of started) await terminate(s.child);
  await deleteQueues(started.map((s) => s.queue));
});

describe("Smarter's chart command", () => {
  let w: Started;
  beforeAll(async () => {
    const queue = uniqueName('entry');
    const node = `${uniqueName('entry')}@${(await exec('hostname')).stdout.trim()}`;
    w = startCelery(
      [
        '-A',
        'smarter.workers.celery.app',
        'worker',
        '--concurrency=5',
        '--loglevel=info',
        '-Q',
        queue,
        '-E',
        '-n',
        node,
      ],
      queue,
      node,
    );
    await ready(w);
  }, 90_000);

  test('starts, and says once that the tasks are its own', () => {
    expect(w.out().split('-A smarter.workers.celery.app: the tasks are this worker').length - 1).toBe(1);
  });

  test("pgrep -f 'celery.*worker' finds it (the chart's probes)", async () => {
    const { stdout } = await exec('/bin/sh', ['-c', "pgrep -f 'celery.*worker'"]);
    expect(stdout.split('\n')).toContain(String(w.child.pid));
  });

  test('the compose healthcheck, `celery -A smarter.workers.celery.app inspect ping`, answers 0', async () => {
    const { stdout } = await ourCelery('-A', 'smarter.workers.celery.app', 'inspect', 'ping', '-d', w.node);
    expect(stdout).toBe(`->  ${w.node}: OK\n        pong\n\n1 node online.\n`);
    // As compose runs it, every node: this one is among those that answer.
    expect((await ourCelery('-A', 'smarter.workers.celery.app', 'inspect', 'ping')).stdout).toContain(`${w.node}: OK`);
  }, 90_000);

  test("Debian's celery inspect ping gets pong", async () => {
    expect(JSON.parse(await pyCelery('inspect', 'ping', '-d', w.node, '-j'))).toEqual({ [w.node]: { ok: 'pong' } });
  });

  test("Debian's celery control pool_grow and pool_shrink change the slots; autoscale and pool_restart answer Celery's errors", async () => {
    const concurrency = async () =>
      (
        JSON.parse(await pyCelery('inspect', 'stats', '-d', w.node, '-j')) as Record<
          string,
          { pool: Record<string, number> }
        >
      )[w.node]?.pool['max-concurrency'];
    expect(JSON.parse(await pyCelery('control', 'pool_grow', '2', '-d', w.node, '-j'))).toEqual([
      { [w.node]: { ok: 'pool will grow' } },
    ]);
    expect(await concurrency()).toBe(7);
    expect(JSON.parse(await pyCelery('control', 'pool_shrink', '3', '-d', w.node, '-j'))).toEqual([
      { [w.node]: { ok: 'pool will shrink' } },
    ]);
    expect(await concurrency()).toBe(4);
    expect(JSON.parse(await pyCelery('control', 'autoscale', '10', '2', '-d', w.node, '-j'))).toEqual([
      { [w.node]: { error: "ValueError('Autoscale not enabled')" } },
    ]);
    expect(JSON.parse(await pyCelery('control', 'pool_restart', '-d', w.node, '-j'))).toEqual([
      { [w.node]: { error: "ValueError('Pool restarts not enabled')" } },
    ]);
  }, 90_000);

  test('SIGTERM ends it with 0', async () => {
    const exited = new Promise<number | null>((r) => w.child.once('exit', (c) => r(c)));
    w.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});

test("--autoscale: Debian's celery control autoscale moves the bounds", async () => {
  const queue = uniqueName('autoscale');
  const node = `${uniqueName('autoscale')}@x`;
  const w = startCelery(['worker', '-Q', queue, '-n', node, '--autoscale=6,2', '--without-mingle'], queue, node);
  await ready(w);
  expect(JSON.parse(await pyCelery('control', 'autoscale', '4', '1', '-d', node, '-j'))).toEqual([
    { [node]: { ok: 'autoscale now max=4 min=1' } },
  ]);
  expect(JSON.parse(await pyCelery('control', 'pool_grow', '-d', node, '-j'))).toEqual([
    { [node]: { error: 'pool_grow is not supported with autoscale. Adjust autoscale range instead.' } },
  ]);
  await terminate(w.child);
}, 90_000);

test('--max-tasks-per-child 5: the worker is replaced in place, every task runs once', async () => {
  const queue = uniqueName('recycle');
  const node = `${uniqueName('recycle')}@x`;
  const w = startCelery(
    ['worker', '-Q', queue, '-n', node, '-c', '2', '--max-tasks-per-child=5', '--without-mingle', '-l', 'info'],
    queue,
    node,
  );
  await ready(w);
  const ids = await send(queue, 17);
  await waitFor(() => (runsOf(w, ids).every((n) => n >= 1) ? true : undefined), 120_000, 200);
  // Replaced at least three times (17 tasks, 5 each), by the same supervisor: the container would see no exit.
  expect(w.out().split('recycling: ran 5 tasks').length - 1).toBeGreaterThanOrEqual(3);
  expect(w.child.exitCode).toBeNull();
  expect(runsOf(w, ids)).toEqual(ids.map(() => 1));
  await terminate(w.child);
  expect(w.child.exitCode).toBe(0);
}, 180_000);

test('--max-memory-per-child: past the bound after a task, replaced, every task runs once', async () => {
  const queue = uniqueName('recycle-mem');
  const node = `${uniqueName('recycle-mem')}@x`;
  // 1 KiB: every task leaves more, so each run is the last of its process.
  const w = startCelery(
    ['worker', '-Q', queue, '-n', node, '-c', '2', '--max-memory-per-child=1', '--without-mingle'],
    queue,
    node,
  );
  await ready(w);
  const ids = await send(queue, 4);
  await waitFor(() => (runsOf(w, ids).every((n) => n >= 1) ? true : undefined), 120_000, 200);
  expect(w.out()).toMatch(/recycling: resident memory \d+ KiB after a task \(--max-memory-per-child 1\)/);
  expect(runsOf(w, ids)).toEqual(ids.map(() => 1));
}, 180_000);

test("Smarter's Beat command runs smarter-beat, found by pgrep -f 'celery.*beat'", async () => {
  // helm/charts/smarter/templates/deployment-beat.yaml: celery -A smarter.workers.celerybeat beat --loglevel=info
  const op = uniqueName('beat-op');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bin/celery.ts', '-A', 'smarter.workers.celerybeat', 'beat', '--loglevel=info'],
    {
      env: {
        ...ENV,
        SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE: op,
        SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE: `${op}-infra`,
        SMARTER_BEAT_SCHEDULE_FILE: `/tmp/${op}.json`,
        SMARTER_BEAT_HTTP_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let text = '';
  child.stdout.on('data', (b: Buffer) => (text += b.toString()));
  started.push({ child, node: '', queue: op, out: () => text });
  await waitFor(() => (text.includes('beat: holding the lock') ? true : undefined), 60_000, 100);
  expect(text).toContain("-A smarter.workers.celerybeat: the schedule is smarter-beat's own");
  const { stdout } = await exec('/bin/sh', ['-c', "pgrep -f 'celery.*beat'"]);
  expect(stdout.split('\n')).toContain(String(child.pid));
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
}, 90_000);
