/**
 * No loss, no double runs on Redis, with real processes: our worker SIGKILLed with 100 messages unacked
 * (late ack) is restored from `unacked` after the visibility timeout and each runs once; a mixed fleet of
 * a Python Celery prefork worker and ours on one Redis queue runs each of the 10,000 tasks exactly
 * once, and again with one SIGKILL of ours midway (late ack): none lost, and a task runs twice only if it
 * was in `unacked` at the kill (the test says how many were held and how many ran twice).
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { REDIS_URL, type RedisScope, redisScope } from '../support/redis.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';
import { waitFor } from '../support/wait.js';
import { PYTHON, spawnPythonWorker } from '../support/python-worker.js';
import { spawnTestWorker } from '../support/spawn-worker.js';

const run = promisify(execFile);
const procs: ChildProcess[] = [];
let s: RedisScope;
let key: string;
let queue: string;

const transport = (extra: Record<string, unknown> = {}) => JSON.stringify({ global_keyprefix: s.prefix, ...extra });

function ours(env: Record<string, string>, concurrency: number): ChildProcess {
  const p = spawnTestWorker({
    queue,
    concurrency,
    env: {
      CELERY_BROKER_URL: REDIS_URL,
      CELERY_RESULT_BACKEND: 'disabled',
      CELERY_WORKER_HOSTNAME: `ours-${randomUUID().slice(0, 6)}@%h`,
      LOG_LEVEL: 'warning',
      ...env,
    },
  });
  procs.push(p);
  return p;
}

function python(concurrency: number, extra: Record<string, string> = {}): ChildProcess {
  const p = spawnPythonWorker({
    app: 'pyworker',
    queue,
    pool: 'prefork',
    concurrency,
    node: `py-${randomUUID().slice(0, 6)}@%h`,
    env: {
      CELERY_BROKER_URL: REDIS_URL,
      CELERY_RESULT_BACKEND: 'redis://127.0.0.1:6379/0',
      BROKER_TRANSPORT_OPTIONS: transport(),
      ...extra,
    },
  });
  procs.push(p);
  return p;
}

const send = (n: number) =>
  run(PYTHON, ['spec/interop/python/kombu_redis.py', REDIS_URL, s.prefix, 'stamp', queue, String(n), '0', key, '1'], {
    timeout: 120_000,
    maxBuffer: 1 << 20,
  });

/** The count: each of these runs exactly once across the fleet. */
const FLEET_N = 10_000;
const report = (line: string) => process.stderr.write(`${line}\n`);

const runs = async () => Object.values(await runCounter().hgetall(`${key}:runs`)).map(Number);

beforeEach(() => {
  s = redisScope();
  key = `fleet:${randomUUID()}`;
  queue = `fleet_${randomUUID().slice(0, 8)}`;
});
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await runCounter().del(`${key}:runs`, `${key}:late`, `${key}:by`);
  await s.close();
});
afterAll(async () => closeRunCounter());

test('own wiring: SIGKILL with 100 unacked (late ack): after a 2 s visibility timeout the restarted worker restores them and runs each once', async () => {
  const first = ours(
    {
      CELERY_BROKER_TRANSPORT_OPTIONS: transport(),
      STAMP_ACKS_LATE: '1',
      STAMP_RUN_MS: '60000',
      CELERY_WORKER_PREFETCH_MULTIPLIER: '10',
    },
    10,
  );
  await send(100);
  await waitFor(async () => (await s.redis.hlen(s.keys.unacked)) === 100, 60_000, {
    stepMs: 200,
    what: '100 unacked in the first worker',
  });
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  expect(await s.redis.hlen(s.keys.unacked)).toBe(100);
  ours({ CELERY_BROKER_TRANSPORT_OPTIONS: transport({ visibility_timeout: 2 }), STAMP_ACKS_LATE: '1' }, 8);
  await waitFor(async () => (await runs()).length === 100, 90_000, { stepMs: 200, what: '100 runs' });
  await new Promise((r) => setTimeout(r, 3000));
  const counts = await runs();
  expect(counts).toHaveLength(100);
  expect(counts.every((n) => n === 1)).toBe(true);
  expect(await s.redis.hlen(s.keys.unacked)).toBe(0);
}, 180_000);

test('own wiring: mixed fleet, 10,000 tasks: a Python prefork worker and ours on one Redis queue run each exactly once', async () => {
  python(2);
  ours({ CELERY_BROKER_TRANSPORT_OPTIONS: transport() }, 8);
  await new Promise((r) => setTimeout(r, 3000));
  const started = Date.now();
  await send(FLEET_N);
  await waitFor(async () => (await runs()).length === FLEET_N, 120_000, { stepMs: 200, what: '10,000 runs' });
  report(`mixed fleet: ${FLEET_N} tasks sent and run in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await new Promise((r) => setTimeout(r, 2000));
  const counts = await runs();
  expect(counts).toHaveLength(FLEET_N);
  expect(counts.filter((n) => n !== 1)).toEqual([]);
  const by = await runCounter().hgetall(`${key}:by`);
  expect(Number(by.python ?? 0)).toBeGreaterThan(0);
  expect(Number(by.ours ?? 0)).toBeGreaterThan(0);
}, 180_000);

test('own wiring: mixed fleet, 10,000 tasks, ours SIGKILLed midway (late ack): none lost, double runs only among what was unacked at the kill', async () => {
  const vt = { visibility_timeout: 3 };
  python(2, { BROKER_TRANSPORT_OPTIONS: transport(vt) });
  const victim = ours({ CELERY_BROKER_TRANSPORT_OPTIONS: transport(vt), STAMP_ACKS_LATE: '1', STAMP_RUN_MS: '20' }, 8);
  await new Promise((r) => setTimeout(r, 3000));
  const started = Date.now();
  await send(FLEET_N);
  await waitFor(async () => (await runs()).length >= FLEET_N / 4, 120_000, { stepMs: 200, what: 'a quarter run' });
  victim.kill('SIGKILL');
  await new Promise((r) => victim.once('exit', r));
  const held = new Set(
    Object.values(await s.redis.hgetall(s.keys.unacked)).map((e) => {
      const [m] = JSON.parse(e) as [{ properties: { correlation_id: string } }];
      return m.properties.correlation_id;
    }),
  );
  ours({ CELERY_BROKER_TRANSPORT_OPTIONS: transport(vt), STAMP_ACKS_LATE: '1' }, 8);
  await waitFor(async () => (await runs()).length === FLEET_N, 150_000, { stepMs: 200, what: '10,000 runs' });
  await new Promise((r) => setTimeout(r, 4000));
  const all = await runCounter().hgetall(`${key}:runs`);
  expect(Object.keys(all)).toHaveLength(FLEET_N);
  const twice = Object.entries(all)
    .filter(([, n]) => Number(n) > 1)
    .map(([id]) => id);
  report(
    `mixed fleet with a SIGKILL: ${FLEET_N} run in ${((Date.now() - started) / 1000).toFixed(1)} s; ${held.size} unacked at the kill (ours, and Python's prefetch), ${twice.length} ran twice, all of them among those`,
  );
  expect(twice.filter((id) => !held.has(id))).toEqual([]);
  expect(Object.values(all).every((n) => Number(n) <= 2)).toBe(true);
}, 240_000);
