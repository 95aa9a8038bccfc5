/**
 * Deleting a queue while countdowns are being delivered into it stalls RabbitMQ 3.10's at-least-once
 * dead-lettering out of the last delay level: its dead-letter worker keeps those messages pending for ever
 * (every target settled, never acked), and once 32 are pending (its prefetch) nothing leaves that level, for
 * any queue. Unbinding first lets the deliveries in flight be confirmed by the live queue, and what comes
 * later routes to the sink alone, which settles; then the queue can go. Tests and benchmarks delete many
 * queues with checks still waiting, so they all delete through here (docs/delayed-delivery.md: "A deleted queue and RabbitMQ
 * 3.10's delay levels").
 */
import type amqp from 'amqplib';
import { DELAY_DELIVERY_EXCHANGE, delayBinding } from '../lib/broker/amqp/topology.js';

const SETTLE_MS = 200;

/** Unbinds each queue from the delay delivery exchange, waits for what was in flight, then deletes queue and namesake exchange. */
export async function retireQueues(
  conn: { createChannel(): Promise<amqp.Channel> },
  names: readonly string[],
): Promise<void> {
  let unbound = false;
  for (const n of names) {
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    try {
      await ch.checkQueue(n);
      await ch.unbindQueue(n, DELAY_DELIVERY_EXCHANGE, delayBinding(n).pattern);
      unbound = true;
    } catch {
      // No such queue, or no delay exchange: nothing in flight to wait for.
    }
    await ch.close().catch(() => undefined);
  }
  if (unbound) await new Promise((r) => setTimeout(r, SETTLE_MS));
  for (const n of names) {
    const ch = await conn.createChannel();
    ch.on('error', () => undefined);
    await ch.deleteQueue(n).catch(() => undefined);
    await ch.deleteExchange(n).catch(() => undefined);
    await ch.close().catch(() => undefined);
  }
}
