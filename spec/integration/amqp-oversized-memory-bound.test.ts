/**
 * What a RabbitMQ worker holds in memory at once is bounded whatever the messages weigh: with 20 queued
 * messages of 20 MB (over the 8 MiB body limit) interleaved with 20 good ones, and the worker at its default
 * prefetch for `-c 4` (16), its kernel high-water mark (VmHWM) stays under 400 MB (259–284 MB measured;
 * 420–461 MB with its consumers at the full prefetch from the start), the 20 heavy ones are dead-lettered with
 * the size reason and the 20 good ones run.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import amqp from '../../lib/broker/amqp/amqplib.js';
import { AMQP_URL, deleteQueues, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { terminate } from '../support/child.js';
import { GOOD, HEAVY, heavyAndGood, startMeasuredWorker } from '../support/heavy-messages.js';
import { closeRunCounter, runCounter } from '../support/test-tasks.js';

async function messageCount(queue: string): Promise<number> {
  return withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount).catch(() => 0);
}

afterAll(async () => closeRunCounter());

describe('own wiring: a RabbitMQ worker with 20 MB messages queued', () => {
  let worker: ChildProcess | undefined;
  const queue = uniqueName('heavy');
  const key = `heavy:${randomUUID()}`;
  afterAll(async () => {
    await terminate(worker);
    await runCounter().del(`${key}:runs`, `${key}:late`, `${key}:by`);
    await deleteQueues([queue, `${queue}.dead_letter`]);
  });

  test('holds at most about one heavy message at once: peak RSS under 400 MB, the 20 heavy ones dead-lettered for their size, the 20 good ones run', async () => {
    // Heavy and good interleaved, all queued before the worker starts (so its first prefetch window is full of them).
    const conn = await amqp.connect(AMQP_URL);
    try {
      const ch = await conn.createConfirmChannel();
      await ch.assertQueue(queue, { durable: true });
      for (const m of heavyAndGood(key)) {
        ch.sendToQueue(queue, m.body, {
          contentType: 'application/json',
          contentEncoding: 'utf-8',
          correlationId: m.id,
          persistent: true,
          headers: m.headers,
        });
        // One heavy body at a time in this process's socket buffers.
        await ch.waitForConfirms();
      }
    } finally {
      await conn.close().catch(() => undefined);
    }
    expect(await messageCount(queue)).toBe(HEAVY + GOOD);
    const w = startMeasuredWorker(queue, { CELERY_BROKER_URL: AMQP_URL });
    worker = w.process;
    const dlq = `${queue}.dead_letter`;
    await waitFor(
      async () => (await messageCount(dlq)) >= HEAVY && (await runCounter().hlen(`${key}:runs`)) >= GOOD,
      240_000,
      200,
    );
    const peak = w.peakMb();
    const reasons = await withChannel(async (ch) => {
      const out: string[] = [];
      for (;;) {
        const m = await ch.get(dlq, { noAck: true });
        if (m === false) return out;
        const reason: unknown = m.properties.headers?.['x-dead-letter-reason'];
        out.push(typeof reason === 'string' ? reason : Buffer.isBuffer(reason) ? reason.toString('utf8') : '');
      }
    });
    expect(reasons).toHaveLength(HEAVY);
    expect(reasons.filter((r) => /over the limit of \d+ bytes/.test(r))).toHaveLength(HEAVY);
    expect(await runCounter().hlen(`${key}:runs`)).toBe(GOOD);
    expect(peak).toBeLessThan(400);
  }, 300_000);
});
