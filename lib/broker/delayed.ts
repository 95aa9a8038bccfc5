/**
 * Sending for later, above every broker: what a delay store keeps of a message, and how a delivery is
 * deferred (atomically where the broker can). Also `Broker.delayedStats()` for people, in words.
 */
import type { Broker, DelayLevelStats, Delivery, OutgoingMessage } from './broker.js';
import { copyProperties } from './republish.js';

/**
 * What is sent for later carries no per-message TTL: AMQP's `expiration` would fire inside the delay
 * queues and drop it; Celery's `expires` header is what counts, and the worker checks it when due.
 */
export function withoutTtl(m: OutgoingMessage): OutgoingMessage {
  if (m.properties.expiration === undefined) return m;
  const { expiration: _dropped, ...properties } = m.properties;
  return { body: m.body, properties };
}

/** `broker.sendLater`, for every caller: the message as the delay store keeps it (`withoutTtl`). */
export async function sendLater(
  broker: Pick<Broker, 'sendLater'>,
  queue: string,
  m: OutgoingMessage,
  delayMs: number,
): Promise<void> {
  await broker.sendLater(queue, withoutTtl(m), delayMs);
}

/**
 * Defers a delivery's exact message to its queue `delayMs` from now, and settles it: in one step where the
 * broker can (`atomicDefer`, Redis), else sent later (confirmed) and then acked. Throws, leaving the
 * delivery unsettled, when the message could not be deferred.
 */
export async function deferDelivery(
  broker: Pick<Broker, 'capabilities' | 'sendLater' | 'defer'>,
  delivery: Delivery,
  delayMs: number,
): Promise<void> {
  if (broker.capabilities.atomicDefer && broker.defer) return broker.defer(delivery, delayMs);
  await sendLater(
    broker,
    delivery.queue,
    { body: delivery.raw.body, properties: copyProperties(delivery.raw) },
    delayMs,
  );
  delivery.ack();
}

/** The next delivery is no later than the bound of the lowest non-empty level. */
export function nextDueWithinSeconds(levels: readonly DelayLevelStats[]): number | null {
  return levels.find((l) => l.messages > 0)?.dueWithinSeconds ?? null;
}

export function formatDuration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}
