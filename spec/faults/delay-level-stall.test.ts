/**
 * RabbitMQ 3.10's at-least-once dead-lettering out of the last delay level stalls when a queue is deleted
 * while countdowns are being delivered into it: the level's dead-letter worker keeps those messages pending
 * for ever, and at 32 of them (its prefetch) no countdown leaves the level again, for any queue. Found when
 * the shared broker's celery_delayed_0 held 6,413 such messages and every 1-second countdown was late for
 * ever. On a node of the test's own: what deletes queues this way (tests, benchmarks, an operator) must
 * unbind them first (bench/retire-queue.ts), and a stalled level is healed without losing anything by
 * restarting its dead-letter worker (.ci/heal-delay-levels.erl, in docs/delayed-delivery.md).
 */
import fs from 'node:fs';
import type { Channel, ConfirmChannel } from 'amqplib';
import { retireQueues } from '../../bench/retire-queue.js';
import { topologyOn } from '../../lib/broker/amqp/amqp-declare.js';
import amqp from '../../lib/broker/amqp/amqplib.js';
import {
  DELAY_DELIVERY_EXCHANGE,
  delayBinding,
  delayEntryExchange,
  delayRoutingKey,
  delayTopology,
} from '../../lib/broker/amqp/topology.js';
import { type RabbitNode, startRabbitNode } from '../support/rabbit-node.js';

type Conn = Awaited<ReturnType<typeof amqp.connect>>;
let node: RabbitNode;
let conn: Conn;
let ch: ConfirmChannel;

beforeAll(async () => {
  node = await startRabbitNode();
  conn = await amqp.connect(node.url);
  ch = await conn.createConfirmChannel();
  await topologyOn(conn, delayTopology('quorum'));
}, 180_000);
afterAll(async () => {
  await conn?.close().catch(() => undefined);
  await node?.remove();
});

async function declareBound(c: Channel, queue: string): Promise<void> {
  await c.assertQueue(queue, { durable: true });
  const b = delayBinding(queue);
  await c.bindQueue(queue, DELAY_DELIVERY_EXCHANGE, b.pattern);
}

function sendIn1s(queue: string, body: string): void {
  ch.publish(delayEntryExchange(1), delayRoutingKey(1, queue), Buffer.from(body), { persistent: true });
}

/** Ten queues each get 2,000 one-second countdowns and are deleted as those come out of the last level. */
async function deleteUnderDelivery(label: string, remove: (queue: string) => Promise<void>): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const q = `${label}_${round}`;
    await declareBound(ch, q);
    for (let i = 0; i < 2000; i++) sendIn1s(q, 'x');
    await ch.waitForConfirms();
    await new Promise((r) => setTimeout(r, 1000 + (round % 5) * 50));
    await remove(q);
  }
  await new Promise((r) => setTimeout(r, 3000));
}

/** ms until a one-second countdown to a live queue arrives, or -1 after `giveUpMs`. */
async function probe(label: string, giveUpMs = 8000): Promise<number> {
  const q = `${label}_probe`;
  await declareBound(ch, q);
  const t0 = Date.now();
  sendIn1s(q, 'probe');
  await ch.waitForConfirms();
  try {
    for (;;) {
      if (await ch.get(q, { noAck: true })) return Date.now() - t0;
      if (Date.now() - t0 > giveUpMs) return -1;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await retireQueues(conn, [q]);
  }
}

test('queues retired through retireQueues (unbind, settle, delete) under 20,000 countdowns leave the last delay level flowing', async () => {
  await deleteUnderDelivery('retired', (q) => retireQueues(conn, [q]));
  const ms = await probe('after_retired');
  process.stdout.write(`retired: probe countdown arrived after ${ms} ms\n`);
  expect(ms).toBeGreaterThanOrEqual(1000);
  expect(ms).toBeLessThan(4000);
}, 120_000);

test('the same queues deleted outright leave countdowns stuck in the last level (RabbitMQ 3.10; at 32 it stalls); restarting its dead-letter worker lets it flow again', async () => {
  await deleteUnderDelivery('deleted', async (q) => void (await ch.deleteQueue(q)));
  const stalled = await probe('stalled');
  const healed = (await node.ctl('eval', fs.readFileSync('.ci/heal-delay-levels.erl', 'utf8'))).trim();
  // The probe of the stalled level was waiting behind the stuck ones: it arrives once the worker restarts, after
  // the thousands released with it, which on a busy 2-core machine took longer than 8 s in one run.
  const after = await probe('after_heal', 30_000);
  process.stdout.write(
    `deleted outright: probe ${stalled} ms (-1: never), workers restarted ${healed}, then a probe after ${after} ms\n`,
  );
  // Messages stuck pending are certain; whether 32 of them (a stalled level) gather in one run is not.
  expect(Number(healed)).toBeGreaterThanOrEqual(1);
  expect(after).toBeGreaterThanOrEqual(1000);
}, 120_000);
