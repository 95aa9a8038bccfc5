/**
 * Countdowns parked in our Redis delayed set, seen and handled with Celery's tools and ours: `celery inspect
 * scheduled` (Debian's Celery 5.2.6) lists them as Celery lists held ETA requests (worker/control.py
 * `scheduled`); `smarter-worker delayed purge [--queue Q]` removes them; `smarter-worker delayed release
 * [--queue Q]` moves them back into their queue unchanged, where a Python-only fleet (the rollback) holds
 * each until its ETA and runs it once.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { REDIS_URL, uniqueName } from '../support/amqp.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';
import { waitFor } from '../support/wait.js';
import { redisappCelery, spawnPythonWorker } from '../support/python-worker.js';

const exec = promisify(execFile);

let h: RedisHarness;
const procs: ChildProcess[] = [];

const celery = (...args: string[]) => redisappCelery(REDIS_URL, h.pythonEnv, ...args);

/** The real CLI, on the test's key prefix. */
const cli = async (...args: string[]) =>
  (
    await exec(process.execPath, ['--import', 'tsx', 'tasks/main.ts', 'delayed', ...args], {
      timeout: 60_000,
      env: {
        ...process.env,
        CELERY_BROKER_URL: REDIS_URL,
        CELERY_BROKER_TRANSPORT_OPTIONS: JSON.stringify({ global_keyprefix: h.scope.prefix }),
        LOG_LEVEL: 'error',
      },
    })
  ).stdout;

const parkedMembers = () => h.scope.redis.zrange(h.scope.keys.delayed, 0, -1);

beforeAll(async () => {
  h = await startRedisWorker();
}, 60_000);
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
  await h.scope.redis.del(h.scope.keys.delayed);
});
afterAll(async () => {
  await h.stop();
  await closeRunCounter();
});

test('own wiring: celery inspect scheduled lists a countdown parked in Redis as Celery shows a held ETA: eta, priority 6 and the request', async () => {
  const node = h.worker.options.nodeName;
  const id = await h.worker.publisher.apply('test.add', [2, 3], {}, { queue: h.queue, countdown: 120 });
  expect(await h.scope.redis.zcard(h.scope.keys.delayed)).toBe(1);
  const other = await h.worker.publisher.apply(
    'test.add',
    [1, 1],
    {},
    { queue: uniqueName('notours'), countdown: 120 },
  );
  const out = JSON.parse(await celery('inspect', 'scheduled', '-d', node, '-j')) as Record<
    string,
    Array<{ eta: string; priority: number; request: Record<string, unknown> }>
  >;
  const shown = out[node] ?? [];
  expect(shown.map((s) => s.request.id)).toEqual([id]);
  expect(shown[0]).toMatchObject({
    priority: 6,
    request: { id, name: 'test.add', type: 'test.add', args: [2, 3], hostname: node },
  });
  const eta = Date.parse(shown[0]?.eta ?? '');
  expect(eta - Date.now()).toBeGreaterThan(100_000);
  expect(other).not.toBe(id);
}, 60_000);

test("own wiring: delayed purge --queue removes only that queue's parked messages; delayed purge removes the rest", async () => {
  const mine = uniqueName('purgeq');
  const theirs = uniqueName('keepq');
  for (let i = 0; i < 3; i++) await h.worker.publisher.apply('test.add', [i, i], {}, { queue: mine, countdown: 120 });
  await h.worker.publisher.apply('test.add', [9, 9], {}, { queue: theirs, countdown: 120 });
  expect(await cli('purge', '--queue', mine)).toContain('purged 3 delayed message(s)');
  const left = await parkedMembers();
  expect(left).toHaveLength(1);
  expect(left[0]).toContain(theirs);
  expect(await cli('purge')).toContain('purged 1 delayed message(s)');
  expect(await h.scope.redis.zcard(h.scope.keys.delayed)).toBe(0);
  expect(await h.scope.redis.llen(h.scope.keys.queue(mine))).toBe(0);
}, 60_000);

test("own wiring: delayed release --queue moves that queue's parked messages into it unchanged; a Python-only fleet holds each to its ETA and runs it once", async () => {
  const queue = uniqueName('pyrelease');
  const stay = uniqueName('stayq');
  const key = `release:${randomUUID()}`;
  const dueMs = Date.now() + 12_000;
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push(await h.worker.publisher.apply('test.stamp', [key, dueMs], {}, { queue, eta: new Date(dueMs) }));
  }
  await h.worker.publisher.apply('test.add', [1, 1], {}, { queue: stay, countdown: 120 });
  const before = (await parkedMembers()).filter((m) => m.includes(queue));
  expect(before).toHaveLength(3);

  expect(await cli('release', '--queue', queue)).toContain(`released 3 delayed message(s) for ${queue}`);
  // Unchanged: each list entry is the parked entry's message, byte for byte.
  const listed = await h.scope.redis.lrange(h.scope.keys.queue(queue), 0, -1);
  expect(listed).toHaveLength(3);
  for (const text of listed) expect(before.filter((m) => m.startsWith(`[${text}, `))).toHaveLength(1);
  expect((await parkedMembers()).filter((m) => m.includes(stay))).toHaveLength(1);

  const py = spawnPythonWorker({
    app: 'pyworker',
    queue,
    node: `py-${randomUUID().slice(0, 6)}@%h`,
    env: { CELERY_BROKER_URL: REDIS_URL, CELERY_RESULT_BACKEND: REDIS_URL, ...h.pythonEnv },
  });
  procs.push(py);
  const runs = await waitFor(
    async () => {
      const r = await runCounter().hgetall(`${key}:runs`);
      return Object.keys(r).length >= 3 ? r : undefined;
    },
    60_000,
    { stepMs: 500, what: '3 runs' },
  );
  const late = await runCounter().hgetall(`${key}:late`);
  await runCounter().del(`${key}:runs`, `${key}:late`, `${key}:by`);
  expect(Object.keys(runs).sort()).toEqual([...ids].sort());
  expect(Object.values(runs)).toEqual(['1', '1', '1']);
  // Held to the ETA by the Python worker, not run at release.
  for (const ms of Object.values(late)) expect(Number(ms)).toBeGreaterThanOrEqual(-50);
}, 120_000);
