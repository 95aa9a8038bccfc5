/**
 * Against the real RabbitMQ: the worker's own connection is closed three times
 * (`rabbitmqctl close_connection`, only ours) with tasks running and reserved. What was reserved from the
 * dead channel is dropped unrun (the broker redelivers it), and a settle right after a reconnect is sent,
 * not skipped: every task runs exactly once, and nothing is left unacked.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { AmqpBroker } from '../../lib/broker/amqp/amqp-broker.js';
import type { Delivery } from '../../lib/broker/broker.js';
import { nullLogger } from '../../lib/logger.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { AMQP_URL, closeConnectionNamed, deleteQueues, publishMany, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { startWorker } from '../support/harness.js';
import { recordingLogger } from '../support/logs.js';

const runs = new Map<string, number>();

const countingTasks = (queue: string) => [
  defineTask({
    name: 'probe.count',
    queue,
    params: z.object({ ms: z.number() }),
    run: async ({ ms }, ctx) => {
      runs.set(ctx.id, (runs.get(ctx.id) ?? 0) + 1);
      await sleep(ms);
      return 'ok';
    },
  }),
];

async function publishCounted(queue: string, n: number, ms: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  await publishMany(
    queue,
    ids.map((id) => ({
      body: JSON.stringify([[ms], {}, {}]),
      options: { contentType: 'application/json', correlationId: id, headers: { task: 'probe.count', id } },
    })),
  );
  return ids;
}

test('own wiring: three forced closes with tasks running and reserved: each task runs once, none is left unacked', async () => {
  const logs = recordingLogger();
  const h = await startWorker({ tasks: countingTasks, env: { CELERY_WORKER_CONCURRENCY: '4' }, logger: logs });
  const node = h.worker.options.nodeName;
  const all: string[] = [];
  try {
    for (let round = 0; round < 3; round++) {
      // Tasks outlast `rabbitmqctl`'s start (seconds on a loaded machine), so the close finds four still reserved.
      const ids = await publishCounted(h.queue, 8, 8000);
      all.push(...ids);
      // Four run (acked early), four wait in `reserved` on the channel about to die.
      await waitFor(() => h.worker.active.size === 4 && h.worker.reservedCount === 4, 10_000, 10);
      await closeConnectionNamed(node, 'probe reconnect test');
      await waitFor(() => h.broker.connected, 20_000);
      await waitFor(
        () => ids.every((id) => runs.has(id)) && h.worker.active.size === 0 && h.worker.reservedCount === 0,
        20_000,
      );
    }
    // Long enough for a wrongly kept duplicate to have run.
    await sleep(1000);
    expect(all.filter((id) => runs.get(id) !== 1).map((id) => [id, runs.get(id)])).toEqual([]);
    expect(h.worker.droppedStale).toBeGreaterThanOrEqual(3);
    // Item 8: each successful reconnect is logged with how long the broker was away.
    const restored = logs.lines.filter((l) => /^broker connection restored after \d+\.\d s away$/.test(l.message));
    expect(restored).toHaveLength(3);
    expect(restored.every((l) => typeof l.meta?.away_ms === 'number')).toBe(true);
  } finally {
    await h.app.shutdown();
  }
  // After a clean shutdown every unacked message is back in the queue: there must be none.
  const left = await withChannel(async (ch) => (await ch.checkQueue(h.queue)).messageCount);
  await deleteQueues([h.queue, `${h.queue}.dead_letter`]);
  expect(left).toBe(0);
}, 180_000);

test('own wiring: an ack sent while a reconnect is still restoring the other consumers reaches the broker', async () => {
  const name = uniqueName('probe-acks');
  const broker = new AmqpBroker({ url: AMQP_URL, logger: nullLogger(), connectionName: name });
  await broker.connect();
  const first = uniqueName('acked');
  // Consumers restored after `first`'s: its redeliveries arrive while these are still being set up.
  const others = Array.from({ length: 10 }, () => uniqueName('other'));
  let hold = true;
  const held: Delivery[] = [];
  try {
    for (const q of [first, ...others]) await broker.declareQueue({ name: q });
    await broker.consume(first, (d) => (hold ? held.push(d) : d.ack()));
    for (const q of others) await broker.consume(q, (d) => d.ack());
    await publishCounted(first, 20, 0);
    await waitFor(() => held.length === 20, 10_000);
    hold = false;
    await closeConnectionNamed(name, 'probe ack window test');
    await waitFor(() => broker.connected, 20_000);
    await sleep(500);
  } finally {
    await broker.close();
  }
  // A clean close requeues whatever is still unacked: every redelivery was acked, so nothing is.
  const left = await withChannel(async (ch) => (await ch.checkQueue(first)).messageCount);
  await deleteQueues([first, ...others]);
  expect(left).toBe(0);
  expect(broker.staleSettles).toBe(0);
}, 60_000);
