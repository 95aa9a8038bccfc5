/**
 * Where a message with an ETA waits (ADR-030): due now, it runs; near, the worker holds it (unacked, on a
 * timer); far, it goes back to the broker to be sent later (acked once the broker has it), so it takes no
 * prefetch slot and no consumer_timeout; beyond what the broker can delay, it is refused with the reason.
 * Without native delay in use, every future ETA is held, as Celery does.
 */
import { randomUUID } from 'node:crypto';
import type { Broker, Delivery } from '../../broker/broker.js';
import { deferDelivery } from '../../broker/delayed.js';
import { type LongTimer, setLongTimeout } from '../long-timer.js';
import { dropStaleJobs } from './stale.js';

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

/** Jobs held on timers until due (an ETA, or a rate limit's next token). */
export class HeldJobs<J extends { delivery: Delivery }> {
  private readonly held = new Map<string, { timer: LongTimer; job: J }>();

  get size(): number {
    return this.held.size;
  }

  jobs(): J[] {
    return [...this.held.values()].map((h) => h.job);
  }

  hold(job: J, delayMs: number, due: (job: J) => void): void {
    const key = randomUUID();
    const timer = setLongTimeout(() => {
      this.held.delete(key);
      due(job);
    }, delayMs);
    this.held.set(key, { timer, job });
  }

  /** Drops (and disarms) the held jobs whose connection is gone, and the stale ones of `reserved`; how many. */
  dropStale(reserved: J[]): number {
    return dropStaleJobs(reserved, this.held);
  }

  clear(): void {
    for (const { timer } of this.held.values()) timer.clear();
    this.held.clear();
  }
}
