/**
 * A Redis broker that reaches maxmemory while the worker runs answers its writes with `OOM command not allowed`:
 * a block, as RabbitMQ's resource alarm is one. Under a load of failing tasks (each retry with a countdown, then a
 * dead-letter copy: all publishes) and countdowns parked in the delayed set, the worker says it once at block and
 * once at unblock, shows `smarter_worker_broker_blocked` 1 then 0, and holds every refused publish until Redis
 * takes it: once writes are taken again, every id is accounted for, none run twice, none dead-lettered twice,
 * none lost. On a redis-server of its own.
 */
import { Redis } from 'ioredis';
import { RedisBroker } from '../../lib/broker/redis/redis-broker.js';
import { nullLogger } from '../../lib/logger.js';
import { uniqueName } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import type { Harness } from '../support/harness.js';
import type { LogLine } from '../support/logs.js';
import { type LoadMessage, accountWhenSettled, probe, pushbackLoad, startPushbackWorker } from '../support/pushback.js';
import { freePort } from '../support/rabbit-node.js';
import { type RedisNode, startRedisNode } from '../support/redis-node.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

const BLOCK_MS = 10_000;
const LOAD = { work: 400, workMs: 20, countdowns: 200, fail: 24 };
let node: RedisNode;
let admin: Redis;
let client: RedisBroker;
let h: Harness;
let port: number;
const lines: LogLine[] = [];
const key = uniqueName('oom');

beforeAll(async () => {
  node = await startRedisNode();
  admin = new Redis(node.url);
  port = await freePort();
  h = await startPushbackWorker(node.url, lines, {
    CELERY_WORKER_CONCURRENCY: '16',
    SMARTER_WORKER_HTTP_PORT: String(port),
  });
  client = new RedisBroker({ url: node.url, logger: nullLogger() });
  await client.connect();
}, 60_000);

afterAll(async () => {
  await admin.config('SET', 'maxmemory', '0').catch(() => undefined);
  await h.app.shutdown().catch(() => undefined);
  await client.close();
  admin.disconnect();
  await node.remove();
  await runCounter().del(`${key}:done`, `${key}:fail`, `${key}:at`);
  await closeRunCounter();
}, 60_000);

async function publish(load: readonly LoadMessage[]): Promise<void> {
  for (const m of load) {
    await client.send(h.queue, {
      body: m.body,
      properties: {
        contentType: String(m.options.contentType),
        contentEncoding: String(m.options.contentEncoding),
        headers: m.options.headers as Record<string, unknown>,
        deliveryMode: 2,
        priority: 0,
        correlationId: m.id,
      },
    });
  }
}

/** Empties the dead-letter list, returning the task id of each copy. */
async function drainDeadLetters(): Promise<string[]> {
  const ids: string[] = [];
  await client.take(`${h.queue}.dead_letter`, 10_000, async (d) => {
    ids.push(String((d.raw.properties.headers as Record<string, unknown> | undefined)?.['id']));
    d.ack();
  });
  return ids;
}

async function blockedGauge(): Promise<number | undefined> {
  const line = (await probe(port, '/metrics')).body
    .split('\n')
    .find((l) => l.startsWith('smarter_worker_broker_blocked '));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

test('own wiring: Redis at maxmemory while running: a block, told and gauged; every refused publish held and sent once', async () => {
  const load = pushbackLoad(key, LOAD);
  await publish(load);
  // The failing tasks have run once: their retries (publishes) come due while Redis refuses writes.
  await waitFor(async () => (await runCounter().hlen(`${key}:fail`)) >= LOAD.fail, 60_000, 20);
  await admin.config('SET', 'maxmemory', '1');
  const blockedAt = Date.now();
  let gaugeDuringBlock: number | undefined;
  let sawBlocked = false;
  try {
    while (Date.now() - blockedAt < BLOCK_MS) {
      if (h.broker.blocked) {
        sawBlocked = true;
        gaugeDuringBlock = await blockedGauge();
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await admin.config('SET', 'maxmemory', '0');
  }
  await waitFor(async () => (await blockedGauge()) === 0, 30_000, 250);
  // Every id finishes: done, or each attempt once and its dead-letter copy.
  const final = await accountWhenSettled(key, load, drainDeadLetters, 60_000);
  process.stdout.write(
    `maxmemory for ${BLOCK_MS / 1000} s: sent ${final.sent}, done ${final.done}, ran twice ${final.ranTwice.length}, dead-lettered twice ${final.duplicatedDeadLetters.length}, lost ${final.lost.length}; blocked seen ${sawBlocked}, gauge during the block ${gaugeDuringBlock}\n`,
  );
  expect(final.ranTwice).toEqual([]);
  expect(final.duplicatedDeadLetters).toEqual([]);
  expect(final.lost).toEqual([]);
  expect(final.done).toBe(final.sent);
  expect(sawBlocked).toBe(true);
  expect(gaugeDuringBlock).toBe(1);
  expect(lines.filter((l) => l.message.startsWith('broker blocked publishing'))).toHaveLength(1);
  expect(lines.filter((l) => l.message.startsWith('broker unblocked after'))).toHaveLength(1);
  expect(lines.filter((l) => /publish to redis failed|lost/i.test(l.message))).toEqual([]);
}, 180_000);
