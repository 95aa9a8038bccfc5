/**
 * What the shipped worker holds in memory at once on RabbitMQ is bounded whatever the messages weigh: with 20
 * queued messages of 20 MB (over the 8 MiB body limit) interleaved with 20 good ones, and `dist/tasks/main.js`
 * at its default prefetch for `-c 4` (16), its kernel high-water mark (VmHWM) stays under 400 MB (65 MB at rest,
 * 193–227 MB over seven runs; 685 MB with its consumers at the full prefetch from the start and no byte budget), the 20
 * heavy ones are dead-lettered with the size reason and the 20 good ones succeed.
 */
import amqp from '../../lib/broker/amqp/amqplib.js';
import { AMQP_URL, deleteQueues, uniqueName, withChannel } from '../support/amqp.js';
import { waitFor } from '../support/wait.js';
import { GOOD, HEAVY, type MeasuredWorker, heavyAndGood, startMeasuredWorker } from '../support/heavy-messages.js';
import { ResultReader } from '../support/results.js';

async function messageCount(queue: string): Promise<number> {
  return withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount).catch(() => 0);
}

describe('the shipped worker on RabbitMQ with 20 MB messages queued', () => {
  let worker: MeasuredWorker | undefined;
  const results = new ResultReader();
  const queue = uniqueName('heavy');
  afterAll(async () => {
    await worker?.process.stop();
    await results.close();
    await deleteQueues([queue, `${queue}.dead_letter`]);
  });

  test('holds at most about one heavy message at once: peak RSS under 400 MB, the 20 heavy ones dead-lettered for their size, the 20 good ones succeed', async () => {
    // Heavy and good interleaved, all queued before the worker starts (so its first prefetch window is full of them).
    const good: string[] = [];
    const conn = await amqp.connect(AMQP_URL);
    try {
      const ch = await conn.createConfirmChannel();
      await ch.assertQueue(queue, { durable: true });
      for (const m of heavyAndGood()) {
        if (!m.heavy) good.push(m.id);
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
    worker = startMeasuredWorker(queue, { CELERY_BROKER_URL: AMQP_URL });
    const dlq = `${queue}.dead_letter`;
    await waitFor(async () => (await messageCount(dlq)) >= HEAVY, 240_000, 200);
    const states = await Promise.all(good.map(async (id) => (await results.ready(id, 60_000)).status));
    const peak = worker.peakMb();
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
    expect(states).toEqual(good.map(() => 'SUCCESS'));
    expect(peak).toBeLessThan(400);
  }, 300_000);
});
