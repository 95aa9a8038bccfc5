/**
 * The consuming side of the Redis broker, as Celery's consumer and kombu's Redis QoS carve it: one loop per ack
 * mode pops batches from the consumed lists (an atomic pop that can be sent again, and when empty a wait that
 * takes nothing), hands each message to its consumer, and counts what is unsettled (kombu's QoS: prefetch per
 * consumer, and a byte budget). Settles go by delivery tag, so they survive reconnects. Two timers do kombu's
 * housekeeping: restore what passed the visibility timeout, move due messages out of the delayed set.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { DeliveryHandler } from '../broker.js';
import { RedisDelivery, type Settler } from './delivery.js';
import type { KombuKeys } from './keys.js';
import type { KombuRedis, Popped } from './transport.js';

export interface Consumer {
  handler: DeliveryHandler;
  noAck: boolean;
  prefetch: number;
  unsubscribe?: () => Promise<void>;
}

/** A loop's pop request: the one to send again after a failure, and the last one received (to forget). */
interface PopRequestState {
  pending?: string | undefined;
  forget?: string | undefined;
}

export interface ConsumerLoopDeps {
  transport: KombuRedis;
  keys: KombuKeys;
  /** The command connection (pop requests are forgotten on it). */
  cmd: Redis;
  /** The connection each loop waits on, by ack mode (true: no ack). */
  blocking: ReadonlyMap<boolean, Redis>;
  logger: Logger;
  heldBytesMax: number;
  maxBodyBytes: number;
  visibilityTimeoutSeconds: number;
  /** Whether the broker is closing: loops end, settles are not retried. */
  closing: () => boolean;
}

/**
 * How long an idle loop waits on the first queue's list before it looks at every list again: a message on
 * another queue or a priority list is taken within this when the worker is idle (at once when it is busy).
 */
const WAIT_SECONDS = 0.25;
/** A settle that failed (its connection was cut mid-pipeline) is sent again this many times before it is left to the visibility timeout. */
export const SETTLE_ATTEMPTS = 5;

export class ConsumerLoop implements Settler {
  readonly consumers = new Map<string, Consumer>();
  /** Fanout queue → the exchange and routing key it is bound with: consumed by pub/sub, not by a loop. */
  readonly fanoutQueues = new Map<string, { exchange: string; routingKey: string }>();
  staleSettles = 0;
  private readonly loops = new Map<boolean, Promise<void>>();
  /** Unsettled deliveries: tag → queue and envelope size (kombu's QoS counts them per channel; we count per consumer). */
  private readonly unsettled = new Map<string, { queue: string; bytes: number }>();
  private heldBytes = 0;
  private readonly waiters = new Set<() => void>();
  /** Loop (by ack mode) → why its last pop failed; its queues are not consumed (readiness) until a pop succeeds. */
  private readonly failing = new Map<boolean, string>();
  private timers: NodeJS.Timeout[] = [];
  private cycle = 0;
  /** Acks asked for in this turn of the event loop, and the flush that sends them at its end. */
  private acks: string[] = [];
  private acksFlush: NodeJS.Immediate | undefined;
  private acksSent: Promise<void> | undefined;
  private acksResolve: (() => void) | undefined;

  constructor(private readonly deps: ConsumerLoopDeps) {}

  /** Starts the loop of this ack mode if it is not running, and has it look at its queues now. */
  start(noAck: boolean): void {
    if (!this.loops.has(noAck)) this.loops.set(noAck, this.loop(noAck));
    this.wake();
  }

  /** The restore of messages past the visibility timeout, and the scheduler of the delayed set. */
  startTimers(restoreMs: number, schedulerMs: number): void {
    this.timers.push(setInterval(() => void this.restoreVisible(), restoreMs));
    this.timers.push(setInterval(() => void this.moveDue(), schedulerMs));
    for (const t of this.timers) t.unref();
  }

  /** A queue of a loop is consumed while that loop's pops succeed; a fanout queue while it is subscribed. */
  isConsuming(queue: string): boolean {
    const c = this.consumers.get(queue);
    if (!c) return false;
    return this.fanoutQueues.has(queue) || !this.failing.has(c.noAck);
  }

  isUnsettled(tag: string): boolean {
    return this.unsettled.has(tag);
  }

  /** A delivery settled outside the loop (deferred into the delayed set): its slot and bytes are free. */
  settledElsewhere(tag: string): void {
    this.release(tag);
    this.wake();
  }

  owns(tag: string): boolean {
    return !this.deps.closing() || this.unsettled.has(tag);
  }

  settleByTag(tag: string, what: 'ack' | 'requeue' | 'drop'): Promise<void> {
    return what === 'requeue' ? this.settleTag(tag, 'requeue') : this.ackSoon(tag);
  }

  /**
   * Acks wait for the end of this turn of the event loop and go in one script: the runs that end together cost
   * Redis one call. Their slots are free as the acks are sent, as kombu counts them: the pop they let the loop
   * send goes on the same connection, so Redis runs it after them, and it is on its way while they are.
   */
  private ackSoon(tag: string): Promise<void> {
    this.acks.push(tag);
    this.acksFlush ??= setImmediate(() => void this.flushAcks());
    // One promise for the acks of this turn: they are sent together, and settled together.
    this.acksSent ??= new Promise((resolve) => (this.acksResolve = resolve));
    return this.acksSent;
  }

  private flushAcks(): Promise<void> {
    if (this.acksFlush) clearImmediate(this.acksFlush);
    this.acksFlush = undefined;
    const batch = this.acks;
    const resolve = this.acksResolve;
    this.acks = [];
    this.acksSent = undefined;
    this.acksResolve = undefined;
    if (batch.length === 0) return Promise.resolve();
    for (const tag of batch) this.release(tag);
    this.wake();
    return this.deps.transport.ackMany(batch).then(
      () => resolve?.(),
      // Sent again one by one, each with settleTag's retries.
      async () => {
        await Promise.all(batch.map((tag) => this.settleTag(tag, 'ack', 2)));
        resolve?.();
      },
    );
  }

  /**
   * At close: unsubscribes, lets the loops end within one wait, and gives back what this process took and did
   * not settle, to the front of its queue (kombu's `restore_at_shutdown`).
   */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.wake();
    for (const [, c] of this.consumers) await c.unsubscribe?.().catch(() => undefined);
    this.consumers.clear();
    await Promise.allSettled(this.loops.values());
    // Acked, not yet sent: sent before the rest is restored, or they would run again.
    await this.flushAcks();
    for (const b of this.deps.blocking.values()) b.disconnect();
    for (const tag of this.unsettled.keys()) await this.deps.transport.restore(tag).catch(() => undefined);
    this.unsettled.clear();
    this.heldBytes = 0;
  }

  /** Logged at error once per cause (the loop retries every half second), and at info once it consumes again. */
  private consumeFailed(noAck: boolean, queues: readonly string[], err: unknown): void {
    const cause = coerceError(err).message;
    if (this.failing.get(noAck) !== cause) {
      this.deps.logger.error(`consuming from ${queues.join(', ')} failed: ${cause}; not ready, retrying every 0.5 s`, {
        error: cause,
      });
    }
    this.failing.set(noAck, cause);
  }

  private consumeOk(noAck: boolean, queues: readonly string[]): void {
    if (!this.failing.has(noAck)) return;
    this.failing.delete(noAck);
    this.deps.logger.info(`consuming again from ${queues.join(', ')}`);
  }

  private held(queue: string): number {
    let n = 0;
    for (const u of this.unsettled.values()) if (u.queue === queue) n++;
    return n;
  }

  /** The queues this loop may take from now: kombu's QoS `can_consume`, per consumer. */
  private listQueues(noAck: boolean): string[] {
    const qs = [...this.consumers]
      .filter(
        ([q, c]) =>
          c.noAck === noAck && !this.fanoutQueues.has(q) && (noAck || c.prefetch === 0 || this.held(q) < c.prefetch),
      )
      .map(([q]) => q);
    // kombu's round-robin queue cycle: start from a different queue each time.
    if (qs.length > 1) {
      const k = this.cycle++ % qs.length;
      return [...qs.slice(k), ...qs.slice(0, k)];
    }
    return qs;
  }

  wake(): void {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }

  private async idle(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      const waiters = this.waiters;
      function done() {
        clearTimeout(t);
        waiters.delete(done);
        resolve();
      }
      this.waiters.add(done);
    });
  }

  private async loop(noAck: boolean): Promise<void> {
    const blocking = this.deps.blocking.get(noAck);
    if (!blocking) return;
    const request: PopRequestState = {};
    let next: Promise<Popped[]> | undefined;
    while (!this.deps.closing()) {
      const batch = await (next ?? this.popOnce(noAck, blocking, request, true));
      next = undefined;
      if (!noAck) for (const p of batch) this.hold(p.deliveryTag, p.queue, p.text.length);
      // The next pop is on its way while this batch is handed: Redis takes it while the worker runs these.
      if (batch.length > 0 && !this.deps.closing()) next = this.popOnce(noAck, blocking, request, false);
      for (const popped of batch) {
        const restoring = this.hand(popped, noAck);
        if (restoring) await restoring;
      }
    }
    // Taken after the close began: handed back (hand restores what comes while closing).
    for (const popped of next ? await next : []) await this.hand(popped, noAck);
    // Received and handed: nothing will resend it. (A pop still pending at close keeps its key for its 600 s.)
    if (request.forget) await this.deps.cmd.del(this.deps.keys.popRequest(request.forget)).catch(() => undefined);
  }

  /**
   * One pop of this loop's queues, as many as their windows and the byte budget let it take. With `wait`, a pop
   * that finds nothing (or fails, or may take nothing) waits before it returns: for a message, for a settle, or
   * half a second after a failure.
   */
  private async popOnce(noAck: boolean, blocking: Redis, request: PopRequestState, wait: boolean): Promise<Popped[]> {
    const queues = this.listQueues(noAck);
    // The byte budget is spent: wait for a settle (which wakes this loop).
    if (queues.length === 0 || (!noAck && this.heldBytes >= this.deps.heldBytesMax)) {
      if (wait) await this.idle(1000);
      return [];
    }
    try {
      // A pop that failed is sent again under the same request, so a reply lost to a cut connection returns
      // the messages it took instead of leaving them in `unacked`; once received, the next pop forgets it.
      request.pending ??= randomUUID();
      const budget = noAck
        ? { bytes: this.deps.heldBytesMax, alone: true }
        : {
            bytes: this.deps.heldBytesMax - this.heldBytes,
            alone: this.unsettled.size === 0,
            withholdOver: this.deps.maxBodyBytes,
          };
      const got = await this.deps.transport.popBatch(
        queues,
        this.freeSlots(queues, noAck),
        noAck,
        { id: request.pending, ...(request.forget ? { forget: request.forget } : {}) },
        budget,
      );
      this.consumeOk(noAck, queues);
      request.forget = got.popped.length > 0 ? request.pending : undefined;
      request.pending = undefined;
      if (got.popped.length === 0 && wait) {
        // A message waits that the budget cannot take yet: wait for a settle rather than for the list.
        if (got.full) await this.idle(1000);
        else await this.deps.transport.waitReady(blocking, queues, WAIT_SECONDS);
      }
      return got.popped;
    } catch (err) {
      if (this.deps.closing()) return [];
      this.consumeFailed(noAck, queues, err);
      if (wait) await this.idle(500);
      return [];
    }
  }

  /**
   * How many to take at once: the smallest free prefetch window among the queues (kombu's can_consume), and at
   * most half a window, so that the half in hand keeps the worker busy while Redis pops the other.
   */
  private freeSlots(queues: readonly string[], noAck: boolean): number {
    if (noAck) return 100;
    let free = 100;
    for (const q of queues) {
      const c = this.consumers.get(q);
      if (c && c.prefetch > 0) free = Math.min(free, c.prefetch - this.held(q), Math.ceil(c.prefetch / 2));
    }
    return Math.max(1, free);
  }

  /** Handed to its consumer at once; a message no consumer takes is restored (the promise returned). */
  private hand(popped: Popped, noAck: boolean): Promise<void> | void {
    const consumer = this.deps.closing() ? undefined : this.consumers.get(popped.queue);
    if (!consumer) {
      // Taken while closing (as kombu restores at shutdown), or cancelled while we waited: back to the front of its queue.
      if (noAck) return;
      this.release(popped.deliveryTag);
      return this.deps.transport.restore(popped.deliveryTag).then(
        () => undefined,
        () => undefined,
      );
    }
    consumer.handler(new RedisDelivery(noAck ? null : this, popped.queue, popped));
  }

  private hold(tag: string, queue: string, bytes: number): void {
    this.release(tag);
    this.unsettled.set(tag, { queue, bytes });
    this.heldBytes += bytes;
  }

  private release(tag: string): void {
    const u = this.unsettled.get(tag);
    if (!u) return;
    this.unsettled.delete(tag);
    this.heldBytes -= u.bytes;
  }

  /** Resolves once Redis has it, or once it is given up on (logged). */
  private settleTag(tag: string, what: 'ack' | 'requeue', attempt = 1): Promise<void> {
    const { transport } = this.deps;
    const done = what === 'requeue' ? transport.restore(tag, true) : transport.ack(tag);
    return done.then(
      () => this.settledElsewhere(tag),
      async (err: unknown) => {
        // Acks and restores by tag can be sent again; ioredis aborts those of a pipeline cut in the middle.
        if (attempt < SETTLE_ATTEMPTS && !this.deps.closing()) {
          await new Promise((r) => setTimeout(r, 100 * attempt));
          return this.settleTag(tag, what, attempt + 1);
        }
        this.release(tag);
        this.staleSettles++;
        this.deps.logger.warn(
          `could not ${what} message ${tag}: ${coerceError(err).message}; it is restored after the visibility timeout`,
        );
        this.wake();
      },
    );
  }

  private async restoreVisible(): Promise<void> {
    const vt = this.deps.visibilityTimeoutSeconds;
    try {
      const n = await this.deps.transport.restoreVisible(vt);
      if (n) this.deps.logger.warn(`restored ${n} message(s) unacked for longer than the visibility timeout (${vt} s)`);
    } catch {
      /* retried at the next interval */
    }
  }

  private async moveDue(): Promise<void> {
    try {
      while ((await this.deps.transport.moveDue()) > 0 && !this.deps.closing()) {
        /* move in batches until nothing is due */
      }
    } catch {
      /* retried at the next interval */
    }
  }
}
