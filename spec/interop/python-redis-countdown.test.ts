/**
 * Never wait on Redis: Python Celery (protocol 1, as Smarter) sends countdowns to our worker on a Redis
 * broker whose visibility timeout is shorter than the countdown. Scaled from the 1,000 × 600 s
 * against 60 s to 300 × 10 s against 1 s (the same 10:1 ratio): none runs early, none runs twice, and
 * the `unacked` hash stays empty while they wait (they wait in the delayed set instead).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { REDIS_URL } from '../support/redis.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { stampTask } from '../support/stamp-task.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';
import { waitFor } from '../support/wait.js';
import { PYTHON } from '../support/python-worker.js';

const run = promisify(execFile);
const N = 300;
const COUNTDOWN = 10;

let h: RedisHarness;
const key = `stamp:${randomUUID()}`;
beforeAll(async () => {
  h = await startRedisWorker({ tasks: (q) => [stampTask(q)], visibilityTimeoutSeconds: 1 });
});
afterAll(async () => {
  await h.stop();
  await runCounter().del(`${key}:runs`, `${key}:late`);
  await closeRunCounter();
});

test(`own wiring: ${N} countdowns of ${COUNTDOWN} s with a 1 s visibility timeout: none early, none twice, unacked empty while they wait`, async () => {
  const { redis, keys } = h.scope;
  await run(
    PYTHON,
    [
      'spec/interop/python/kombu_redis.py',
      REDIS_URL,
      h.scope.prefix,
      'stamp',
      h.queue,
      String(N),
      String(COUNTDOWN),
      key,
      '1',
    ],
    { timeout: 60_000 },
  );
  // While they wait: sample the unacked hash (a message is briefly there between pop and defer).
  let maxUnackedWhileWaiting = 0;
  let sawDelayed = 0;
  const waitUntil = Date.now() + (COUNTDOWN - 3) * 1000;
  await new Promise((r) => setTimeout(r, 1500));
  while (Date.now() < waitUntil) {
    maxUnackedWhileWaiting = Math.max(maxUnackedWhileWaiting, await redis.hlen(keys.unacked));
    sawDelayed = Math.max(sawDelayed, await redis.zcard(keys.delayed));
    await new Promise((r) => setTimeout(r, 200));
  }
  await waitFor(async () => (await runCounter().hlen(`${key}:runs`)) >= N, 60_000, { stepMs: 200, what: `${N} runs` });
  await new Promise((r) => setTimeout(r, 2000));
  const runs = Object.values(await runCounter().hgetall(`${key}:runs`)).map(Number);
  const late = Object.values(await runCounter().hgetall(`${key}:late`)).map(Number);
  expect(sawDelayed).toBe(N);
  expect(maxUnackedWhileWaiting).toBe(0);
  expect(runs).toHaveLength(N);
  expect(runs.every((n) => n === 1)).toBe(true);
  // Python rounds nothing: the eta is its own now + countdown; allow 5 ms for clock reading order.
  expect(Math.min(...late)).toBeGreaterThanOrEqual(-5);
  expect(await redis.hlen(keys.unacked)).toBe(0);
  expect(await redis.zcard(keys.delayed)).toBe(0);
}, 120_000);
