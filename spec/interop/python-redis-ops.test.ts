/**
 * Operating our worker on a Redis broker with Debian's Python Celery: `celery control shutdown` stops it
 * cleanly (exit 0, every message either run once or back in its queue, nothing left in `unacked`), and a
 * Flower-style `app.events.Receiver` on the same Redis sees task-received, task-started and task-succeeded.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { REDIS_URL, redisScopeForBlock } from '../support/redis.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';
import { waitFor } from '../support/wait.js';
import { PYTHON, redisappCelery } from '../support/python-worker.js';
import { spawnTestWorker } from '../support/spawn-worker.js';

const exec = promisify(execFile);

afterAll(async () => closeRunCounter());

describe('own wiring: celery control shutdown on Redis', () => {
  let worker: ChildProcess | undefined;
  const key = `shutdown:${randomUUID()}`;
  const block = redisScopeForBlock(async () => {
    if (worker && worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    await runCounter().del(`${key}:runs`, `${key}:late`, `${key}:by`);
  });

  test('mid-run with 300 tasks (late ack): the worker exits 0, each task ran once or is back in the queue, nothing unacked', async () => {
    const { s } = block;
    const N = 300;
    const queue = `shut_${randomUUID().slice(0, 8)}`;
    const node = `shut-${randomUUID().slice(0, 6)}@test`;
    const transport = JSON.stringify({ global_keyprefix: s.prefix });
    const w = spawnTestWorker({
      queue,
      concurrency: 4,
      env: {
        CELERY_BROKER_URL: REDIS_URL,
        CELERY_BROKER_TRANSPORT_OPTIONS: transport,
        CELERY_RESULT_BACKEND: 'disabled',
        CELERY_WORKER_HOSTNAME: node,
        STAMP_ACKS_LATE: '1',
        STAMP_RUN_MS: '50',
        LOG_LEVEL: 'warning',
      },
    });
    worker = w;
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) =>
      w.once('exit', (code, signal) => r({ code, signal })),
    );
    await exec(
      PYTHON,
      ['spec/interop/python/kombu_redis.py', REDIS_URL, s.prefix, 'stamp', queue, String(N), '0', key, '2'],
      { timeout: 60_000 },
    );
    const runs = async () => runCounter().hlen(`${key}:runs`);
    await waitFor(async () => (await runs()) >= 30, 60_000, { stepMs: 100, what: '30 runs' });
    // The worker is busy: its reply may take more than Celery's default second. With -d the command returns as soon
    // as it answers.
    const stdout = await redisappCelery(
      REDIS_URL,
      { BROKER_TRANSPORT_OPTIONS: transport },
      'control',
      'shutdown',
      '--timeout',
      '10',
      '-d',
      node,
    );
    expect(stdout).toContain(`${node}: OK`);
    const exit = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 30_000))]);
    expect(exit).toEqual({ code: 0, signal: null });
    const counts = Object.values(await runCounter().hgetall(`${key}:runs`)).map(Number);
    const queued = await s.redis.llen(s.keys.queue(queue, 0));
    const state = {
      ranTwice: counts.filter((n) => n > 1).length,
      ranPlusQueued: counts.length + queued,
      unacked: await s.redis.hlen(s.keys.unacked),
    };
    expect(counts.length).toBeLessThan(N);
    expect(state).toEqual({ ranTwice: 0, ranPlusQueued: N, unacked: 0 });
  }, 120_000);
});

describe('own wiring: Flower-style events on Redis', () => {
  let h: RedisHarness;
  beforeAll(async () => {
    h = await startRedisWorker({ env: { CELERY_WORKER_SEND_TASK_EVENTS: 'true' } });
  }, 60_000);
  afterAll(async () => h.stop());

  test('app.events.Receiver sees task-received, task-started and task-succeeded of our task, and our heartbeat', async () => {
    const py = spawn(PYTHON, ['spec/interop/python/events.py', REDIS_URL, '4'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...h.pythonEnv },
    });
    let out = '';
    py.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const done = new Promise((r) => py.once('exit', r));
    await waitFor(() => out.includes('listening'), 15_000, { stepMs: 100, what: 'listening' });
    const id = await h.worker.publisher.apply('test.add', [2, 2], {});
    await done;
    const events = JSON.parse(out.split('\n').filter(Boolean).pop() ?? '[]') as Array<Record<string, unknown>>;
    const mine = events.filter((e) => e.uuid === id);
    const node = h.worker.options.nodeName;
    expect(mine.map((e) => e.type)).toEqual(['task-received', 'task-started', 'task-succeeded']);
    expect(mine[0]).toMatchObject({ name: 'test.add', hostname: node });
    expect(mine[2]).toMatchObject({ result: '4' });
    expect(events.some((e) => e.type === 'worker-heartbeat' && e.hostname === node)).toBe(true);
  }, 60_000);
});
