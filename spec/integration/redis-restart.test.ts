/**
 * Redis restarted under load: our own redis-server (AOF on, temporary directory, free port) is stopped and
 * started again while the worker consumes; the worker reconnects and resumes, and no message is lost.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { encodeTaskMessage } from '../../lib/protocol/index.js';
import { type RedisHarness, startRedisWorker } from '../support/redis-harness.js';
import { type RedisNode, startRedisNode } from '../support/redis-node.js';
import { stampTask } from '../support/stamp-task.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';
import { waitFor } from '../support/wait.js';

let server: RedisNode;

const key = `restart:${randomUUID()}`;
let h: RedisHarness;
beforeAll(async () => {
  server = await startRedisNode();
  h = await startRedisWorker({ url: server.url, tasks: (q) => [stampTask(q, { runMs: 5 })] });
}, 60_000);
afterAll(async () => {
  await h.stop().catch(() => undefined);
  await server.remove();
  await runCounter().del(`${key}:runs`, `${key}:late`, `${key}:by`);
  await closeRunCounter();
});

// Once 998 of 1,000: a pop whose reply the restart cut off left its messages in `unacked` until the
// visibility timeout. redis-lost-reply.test.ts makes that moment happen on every run.
test('own wiring: 1,000 tasks, Redis restarted midway: the worker reconnects and every task runs', async () => {
  const N = 1000;
  for (let i = 0; i < N; i++) {
    const m = encodeTaskMessage({ id: `${key}-${i}`, task: 'test.stamp', args: [], kwargs: { key, due_ms: 0 } });
    await h.broker.send(h.queue, m);
  }
  const runs = async () => runCounter().hlen(`${key}:runs`);
  await waitFor(async () => (await runs()) >= 50, 30_000, { what: '50 runs before the restart' });
  expect(await runs()).toBeLessThan(N);
  await server.stop();
  await new Promise((r) => setTimeout(r, 1000));
  await server.start();
  const probe = new Redis({ port: server.port });
  await waitFor(async () => (await runs()) >= N && (await probe.hlen(h.broker.keys.unacked)) === 0, 90_000, {
    stepMs: 200,
    what: `${N} runs and none unacked`,
  });
  const where = {
    ran: await runs(),
    unacked: await probe.hlen(h.broker.keys.unacked),
    queued: await probe.llen(h.broker.keys.queue(h.queue, 0)),
  };
  probe.disconnect();
  expect(where).toEqual({ ran: N, unacked: 0, queued: 0 });
}, 150_000);
