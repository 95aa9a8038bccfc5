/**
 * A Redis visibility timeout shorter than the ETA hold: the worker holds an ETA at most half the visibility
 * timeout (a longer wait goes to the delayed set), so with a 3 s visibility timeout 20 countdowns of 4.5 s,
 * sent to the queue with their ETA as Celery sends them, each run once (held 4.5 s unacked, every one was
 * restored at 3 s and ran twice).
 */
import { randomUUID } from 'node:crypto';
import { encodeTaskMessage } from '../../lib/protocol/index.js';
import { PyDateTime } from '../../lib/protocol/values.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { stampTask } from '../support/stamp-task.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';
import { waitFor } from '../support/wait.js';

const key = `vt:${randomUUID()}`;
let h: RedisHarness;
beforeAll(async () => {
  h = await startRedisWorker({ visibilityTimeoutSeconds: 3, tasks: (q) => [stampTask(q)] });
}, 60_000);
afterAll(async () => {
  await h.stop().catch(() => undefined);
  await runCounter().del(`${key}:runs`, `${key}:late`, `${key}:by`);
  await closeRunCounter();
});

test('own wiring: visibility timeout 3 s: 20 countdowns of 4.5 s each run once', async () => {
  const N = 20;
  const due = Date.now() + 4500;
  const eta = PyDateTime.fromEpochMs(due);
  for (let i = 0; i < N; i++) {
    const m = encodeTaskMessage({ id: `${key}-${i}`, task: 'test.stamp', args: [], kwargs: { key, due_ms: due }, eta });
    await h.broker.send(h.queue, m);
  }
  await waitFor(async () => (await runCounter().hlen(`${key}:runs`)) >= N, 40_000, { stepMs: 200, what: `${N} runs` });
  // Long enough for a restored copy (3 s, then the restore interval) to have run too.
  await new Promise((r) => setTimeout(r, 8000));
  const counts = Object.values(await runCounter().hgetall(`${key}:runs`)).map(Number);
  expect({ ran: counts.length, ranTwice: counts.filter((n) => n > 1).length }).toEqual({ ran: N, ranTwice: 0 });
}, 90_000);
