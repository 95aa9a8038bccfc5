/**
 * Parks `n` Celery countdowns (of one hour unless said) for `queue` in the delay levels, as fast as RabbitMQ
 * confirms them: raw publishes into the entry level of `seconds` (level 11 for an hour), confirmed in windows
 * of 5,000. Each has its own task id (header `id`, correlation id) and `args` [i, i]. Returns the ids, in order.
 */
import { randomUUID } from 'node:crypto';
import amqp from '../lib/broker/amqp/amqplib.js';
import { delayEntryExchange, delayRoutingKey } from '../lib/broker/amqp/topology.js';

export async function parkCountdowns(url: string, queue: string, n: number, seconds = 3600): Promise<string[]> {
  const conn = await amqp.connect(url);
  const ids: string[] = [];
  try {
    const ch = await conn.createConfirmChannel();
    const eta = new Date(Date.now() + seconds * 1000).toISOString();
    for (let i = 0; i < n; i++) {
      const id = randomUUID();
      ids.push(id);
      const ok = ch.publish(
        delayEntryExchange(seconds),
        delayRoutingKey(seconds, queue),
        Buffer.from(JSON.stringify([[i, i], {}, { callbacks: null, errbacks: null, chain: null, chord: null }])),
        {
          contentType: 'application/json',
          contentEncoding: 'utf-8',
          deliveryMode: 2,
          correlationId: id,
          headers: { lang: 'py', task: 'test.add', id, eta, retries: 0, root_id: id, parent_id: null },
        },
      );
      if (!ok || i % 5000 === 4999) await ch.waitForConfirms();
    }
    await ch.waitForConfirms();
  } finally {
    await conn.close().catch(() => undefined);
  }
  return ids;
}
