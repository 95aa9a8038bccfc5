/**
 * Jobs held unacked on timers until due: an ETA near enough to wait for (the intake), or a rate limit's next
 * token (the slots). On a connection loss, what the worker reserved or holds from the closed channel is
 * dropped, as Celery drops it: the broker redelivers it, so running it here would run it twice (and an early
 * ack could not be sent anyway).
 */
import { randomUUID } from 'node:crypto';
import type { Delivery } from '../broker/broker.js';
import { type LongTimer, setLongTimeout } from './long-timer.js';

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
    let n = 0;
    for (let i = reserved.length - 1; i >= 0; i--) {
      if (reserved[i]?.delivery.live === false) {
        reserved.splice(i, 1);
        n++;
      }
    }
    for (const [key, h] of this.held) {
      if (!h.job.delivery.live) {
        h.timer.clear();
        this.held.delete(key);
        n++;
      }
    }
    return n;
  }

  clear(): void {
    for (const { timer } of this.held.values()) timer.clear();
    this.held.clear();
  }
}
