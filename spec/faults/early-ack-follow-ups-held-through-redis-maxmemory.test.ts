/**
 * Early ack (the default) on a Redis broker that refuses writes (maxmemory) for 30 s while 200 failing tasks
 * retry and are dead-lettered: each retry and dead-letter copy the broker refuses is held and sent again until
 * it takes it (by the Redis broker, which treats the refusal as a block, or by the worker's publish hold). Every id is accounted for (each attempt ran once and one dead-letter copy, or it still waits in
 * the queue), none lost, none dead-lettered twice. On a redis-server of the test's own.
 */
import { Redis } from 'ioredis';
import { uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import type { Harness } from '../support/harness.js';
import type { LogLine } from '../support/logs.js';
import { type Accounting, FAIL_RETRIES, account, pushbackLoad, startPushbackWorker } from '../support/pushback.js';
import { type RedisNode, startRedisNode } from '../support/redis-node.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

const REFUSED_MS = 30_000;
const FAILING = 200;
let node: RedisNode;
let admin: Redis;
let h: Harness | undefined;
const key = uniqueName('maxmem');
const lines: LogLine[] = [];

beforeAll(async () => {
  node = await startRedisNode();
  admin = new Redis(node.url);
}, 60_000);

afterAll(async () => {
  await admin.config('SET', 'maxmemory', '0').catch(() => undefined);
  await h?.app.shutdown().catch(() => undefined);
  admin.disconnect();
  await node.remove();
  await runCounter().del(`${key}:done`, `${key}:fail`, `${key}:at`);
  await closeRunCounter();
}, 60_000);

/** The task ids of the copies in the dead-letter list (kombu's envelope: the headers carry the id). */
async function deadLetterIds(queue: string): Promise<string[]> {
  const items = await admin.lrange(`${queue}.dead_letter`, 0, -1);
  return items.map((i) => String((JSON.parse(i) as { headers?: { id?: unknown } }).headers?.id));
}

/** Task ids still waiting in the queue (not lost: they run once the worker takes them). */
async function queuedIds(queue: string): Promise<Set<string>> {
  const items = await admin.lrange(queue, 0, -1);
  return new Set(items.map((i) => String((JSON.parse(i) as { headers?: { id?: unknown } }).headers?.id)));
}

test('own wiring: early ack, Redis refusing writes for 30 s: retries and dead-letter copies held and sent, 0 lost, 0 dead-lettered twice', async () => {
  h = await startPushbackWorker(node.url, lines, {
    CELERY_RESULT_BACKEND: 'disabled',
    CELERY_WORKER_CONCURRENCY: '16',
  });
  const load = pushbackLoad(key, { work: 0, countdowns: 0, fail: FAILING });
  for (const m of load) {
    await h.broker.send(h.queue, {
      body: m.body,
      properties: {
        contentType: 'application/json',
        contentEncoding: 'utf-8',
        correlationId: m.id,
        headers: (m.options.headers ?? {}) as Record<string, unknown>,
        deliveryMode: 2,
        priority: 0,
      },
    });
  }
  // The failing tasks are retrying (each retry is a publish) when Redis stops taking writes.
  await waitFor(async () => (await runCounter().hlen(`${key}:fail`)) >= FAILING / 2, 60_000, 20);
  await admin.config('SET', 'maxmemory', '1');
  const refusedAt = Date.now();
  try {
    await new Promise((r) => setTimeout(r, REFUSED_MS));
  } finally {
    await admin.config('SET', 'maxmemory', '0');
  }
  const held = h.worker.publisher.held;
  let result: Accounting | undefined;
  await waitFor(
    async () => {
      result = await account(key, load, await deadLetterIds(h?.queue ?? ''));
      return result.lost.length === 0 && held.size === 0;
    },
    120_000,
    500,
  ).catch(() => undefined);
  result = await account(key, load, await deadLetterIds(h.queue), await queuedIds(h.queue));
  const copies = await deadLetterIds(h.queue);
  // The figures, for the record.
  console.log(
    `maxmemory ${REFUSED_MS / 1000} s: ${result.sent} sent, ${result.done} done (${FAIL_RETRIES + 1} attempts + dead letter), ` +
      `${copies.length} copies, ${result.duplicatedDeadLetters.length} dead-lettered twice, ${result.ranTwice.length} attempts run twice, ` +
      `${result.lost.length} lost; held ${held.heldTotal} (${held.failedAttempts} refused attempts); ` +
      `finished ${((Date.now() - refusedAt) / 1000).toFixed(0)} s after the refusal began`,
  );
  // The refusal was felt and waited out: held by the broker's write block, or by the worker's publish hold.
  const blockedLogged = lines.some((l) => /broker blocked publishing/.test(l.message));
  expect(blockedLogged || held.heldTotal > 0).toBe(true);
  expect(result.lost).toEqual([]);
  expect(result.duplicatedDeadLetters).toEqual([]);
  expect(result.ranTwice).toEqual([]);
  expect(result.done).toBe(FAILING);
  expect(lines.filter((l) => /left unacked/.test(l.message))).toEqual([]);
}, 300_000);
