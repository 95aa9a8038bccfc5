/**
 * Follow-ups whose message is already acked (early ack: acked when its task started) have nowhere else to
 * live: a retry, a check-again countdown, a dead-letter copy, a chain step, callback or errback that the
 * broker refuses now (maxmemory, an alarm, a lost connection) is kept here and sent again, with backoff and
 * no attempt cap, until the broker takes it. At shutdown what is still here is written to the state db and
 * sent at the next start (`worker.ts`); only when that is impossible is each one logged as lost.
 *
 * Bounded: past `maxCount` messages or `maxBytes` of bodies, `hold()` resolves only once the hold is back
 * under its bound, so the run whose follow-up was held waits in its slot: the worker takes fewer tasks while
 * the broker refuses, and nothing is dropped. The overshoot is at most one message per waiting caller.
 */
import type { DeadLetterReason } from '../broker/broker.js';
import { coerceError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { PublishProperties } from '../protocol/encode.js';
import type { RawMessage } from '../protocol/types.js';

/** `DeadLetterReason` with its time fixed at the first attempt, so every attempt makes the same copy. */
export type HeldReason = Required<Pick<DeadLetterReason, 'queue' | 'reason' | 'by'>> & { at: string };

/** A message held, and where it goes. */
export type HeldPublish = {
  /** The task id, for the logs. */
  id: string;
  /** What it is, in words: `retry`, `dead-letter copy`, `chain step`… */
  what: string;
  body: Buffer;
} & (
  | /** A task message to a queue, due at `dueAt` (epoch ms) when it has an ETA. */
    { kind: 'queue'; queue: string; dueAt?: number; properties: PublishProperties }
    /** A task message through a named exchange. */
  | { kind: 'exchange'; exchange: string; routingKey: string; properties: PublishProperties }
  /** A dead-letter copy of a message consumed from `from`: its original bytes and properties (the broker adds the headers). */
  | {
      kind: 'dead-letter';
      from: { queue: string; exchange: string; routingKey: string };
      why: HeldReason;
      properties: RawMessage['properties'];
    }
);

export interface HoldLimits {
  maxCount: number;
  maxBytes: number;
  initialMs: number;
  maxMs: number;
  /** Sent at once when the broker takes writes again. */
  parallel: number;
}

export const HOLD_LIMITS: HoldLimits = {
  maxCount: 10_000,
  maxBytes: 64 * 1024 * 1024,
  initialMs: 1000,
  maxMs: 15_000,
  parallel: 16,
};

export class PublishHold {
  private readonly pending: HeldPublish[] = [];
  private bytes = 0;
  private loop: Promise<void> | undefined;
  private roomWaiters: Array<() => void> = [];
  private emptyWaiters: Array<() => void> = [];
  private stopped = false;
  private wake: (() => void) | undefined;
  /** Sent since the hold was last empty; undefined while it is. */
  private sentSinceEmpty: number | undefined;
  /** Messages held since start, and failed attempts to send them. */
  heldTotal = 0;
  failedAttempts = 0;

  constructor(
    private readonly send: (p: HeldPublish) => Promise<void>,
    private readonly logger: Logger,
    private readonly limits: HoldLimits = HOLD_LIMITS,
  ) {}

  get size(): number {
    return this.pending.length;
  }

  /** What is held now, oldest first (for the state db at shutdown). */
  list(): HeldPublish[] {
    return [...this.pending];
  }

  /**
   * Keeps `p` until the broker takes it; resolves once the hold is within its bound (at once, unless the
   * broker has refused for long enough to fill it).
   */
  hold(p: HeldPublish, cause?: unknown): Promise<void> {
    if (this.stopped) {
      // After the shutdown wrote the state db: nothing can keep it any more.
      this.logger.error(`lost ${p.what} of ${p.id}: the broker did not take it and the worker has stopped`, {
        id: p.id,
        lost: true,
        ...(cause !== undefined ? { error: coerceError(cause).message } : {}),
      });
      return Promise.resolve();
    }
    this.pending.push(p);
    this.bytes += p.body.length;
    this.heldTotal++;
    const error = cause === undefined ? undefined : coerceError(cause).message;
    const meta = { id: p.id, held: this.pending.length, ...(error !== undefined ? { error } : {}) };
    // Once per episode at warn (a refusing broker holds many), each one at debug.
    if (this.sentSinceEmpty === undefined) {
      this.sentSinceEmpty = 0;
      this.logger.warn(
        `holding ${p.what} of ${p.id}: the broker did not take it; held publishes are sent again until it does`,
        meta,
      );
    } else this.logger.debug(`holding ${p.what} of ${p.id}`, meta);
    this.start();
    if (this.withinBound()) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Publishes held at the last shutdown (from the state db): sent like any other held one. */
  carry(held: readonly HeldPublish[]): void {
    for (const p of held) {
      this.pending.push(p);
      this.bytes += p.body.length;
    }
    if (held.length > 0) {
      this.sentSinceEmpty ??= 0;
      this.start();
    }
  }

  /** Resolves once nothing is held. */
  whenEmpty(): Promise<void> {
    if (this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptyWaiters.push(resolve));
  }

  /** Resolves once nothing is held, or after `ms`; true when nothing is held. */
  async drained(ms: number): Promise<boolean> {
    if (this.pending.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.whenEmpty(),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms)))),
    ]);
    if (timer) clearTimeout(timer);
    return this.pending.length === 0;
  }

  /** Stops sending (shutdown): what is held stays in `list()`; waiting callers are let go. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
    this.release();
  }

  private withinBound(): boolean {
    return this.pending.length <= this.limits.maxCount && this.bytes <= this.limits.maxBytes;
  }

  private release(): void {
    if (this.stopped || this.withinBound()) {
      const waiters = this.roomWaiters;
      this.roomWaiters = [];
      for (const w of waiters) w();
    }
    if (this.pending.length === 0) {
      if (this.sentSinceEmpty !== undefined && !this.stopped) {
        this.logger.info(`sent the ${this.sentSinceEmpty} held publish(es): the broker takes them again`, {
          sent: this.sentSinceEmpty,
        });
      }
      this.sentSinceEmpty = undefined;
      const waiters = this.emptyWaiters;
      this.emptyWaiters = [];
      for (const w of waiters) w();
    }
  }

  private start(): void {
    if (this.loop || this.stopped) return;
    this.loop = this.run().finally(() => {
      this.loop = undefined;
      // Held while the loop was finishing.
      if (this.pending.length > 0 && !this.stopped) this.start();
    });
  }

  private async run(): Promise<void> {
    let delay = this.limits.initialMs;
    // The first attempt waits too: the broker has just refused.
    while (this.pending.length > 0 && !this.stopped) {
      await this.sleep(delay);
      if (this.stopped) return;
      const batch = this.pending.slice(0, this.limits.parallel);
      const results = await Promise.allSettled(batch.map((p) => this.send(p)));
      let failed: Error | undefined;
      let sent = 0;
      results.forEach((r, i) => {
        const p = batch[i];
        const at = p ? this.pending.indexOf(p) : -1;
        if (!p || at < 0) return;
        this.pending.splice(at, 1);
        if (r.status === 'fulfilled') {
          sent++;
          this.bytes -= p.body.length;
          this.sentSinceEmpty = (this.sentSinceEmpty ?? 0) + 1;
          this.logger.debug(`sent held ${p.what} of ${p.id}`, { id: p.id, held: this.pending.length });
        } else {
          // To the back: one message the broker never takes must not keep the others waiting.
          this.pending.push(p);
          this.failedAttempts++;
          failed ??= coerceError(r.reason);
        }
      });
      this.release();
      if (failed && sent === 0) {
        delay = Math.min(this.limits.maxMs, Math.max(this.limits.initialMs, delay * 2));
        this.logger.debug(`${this.pending.length} held publish(es) still refused; trying again in ${delay} ms`, {
          error: failed.message,
        });
      } else {
        delay = 0;
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
