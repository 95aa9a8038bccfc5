/**
 * Where a message with an ETA waits (ADR-030): due now, it runs; near, the worker holds it (unacked, on a
 * timer); far, it goes back to the broker to be sent later (acked once the broker has it), so it takes no
 * prefetch slot and no consumer_timeout; beyond what the broker can delay, it is refused with the reason.
 * Without native delay in use, every future ETA is held, as Celery does (the held jobs: ../held.ts).
 */
import type { Broker, Delivery } from '../../broker/broker.js';
import { deferDelivery } from '../../broker/delayed.js';

export type EtaPlan = 'now' | 'hold' | 'offload' | 'beyond-range';

export function planEta(delayMs: number, delayed: { holdMaxMs: number } | null, maxDelayMs: number): EtaPlan {
  if (delayed && delayMs > maxDelayMs) return 'beyond-range';
  if (delayed && delayMs > delayed.holdMaxMs) return 'offload';
  return delayMs > 0 ? 'hold' : 'now';
}

/** Sends a delivery's exact message to its own queue later, through the broker, and settles it (atomically where the broker can). */
export async function offload(
  broker: Pick<Broker, 'capabilities' | 'sendLater' | 'defer'>,
  delivery: Delivery,
  delayMs: number,
): Promise<void> {
  await deferDelivery(broker, delivery, delayMs);
}

/** `2^28 − 1 s, about 8.5 years`: a delay range as people read it. */
export function delayRangeInWords(ms: number): string {
  const s = Math.floor(ms / 1000);
  const bits = Math.log2(s + 1);
  const years = (s / 31_557_600).toFixed(1);
  return Number.isInteger(bits) ? `2^${bits} − 1 s, about ${years} years` : `about ${years} years`;
}
