/**
 * What the worker reserved or holds from a channel that is gone. Celery drops those on a connection loss:
 * the broker redelivers them, so running them here would run them twice (and an early ack could not be
 * sent anyway).
 */
import type { Delivery } from '../../broker/broker.js';
import type { LongTimer } from '../long-timer.js';

/** Removes (and disarms) every job whose delivery's channel is gone; returns how many. */
export function dropStaleJobs<J extends { delivery: Delivery }>(
  reserved: J[],
  held: Map<string, { timer: LongTimer; job: J }>,
): number {
  let n = 0;
  for (let i = reserved.length - 1; i >= 0; i--) {
    if (reserved[i]?.delivery.live === false) {
      reserved.splice(i, 1);
      n++;
    }
  }
  for (const [key, h] of held) {
    if (!h.job.delivery.live) {
      h.timer.clear();
      held.delete(key);
      n++;
    }
  }
  return n;
}
