/**
 * Notices a stalled delay level (RabbitMQ 3.10's dead-letter worker stuck after a queue was deleted under it:
 * every countdown leaving that level is late for ever). One replica at a time, under a broker lock, sends a
 * canary countdown of 2^L s for each watched level L, which passes through level L alone, to a queue of the
 * canary's own, and measures when it arrives. A canary later than 2^L s plus the margin (arrived late, or not
 * arrived yet) marks its level late: a metric, a log line naming the level, and /healthz "degraded". The next
 * canary of that level arriving in time clears it.
 */
import { randomUUID } from 'node:crypto';
import type { Broker, BrokerLock, Delivery } from '../broker/broker.js';
import { sendLater } from '../broker/delayed.js';
import type { Logger } from '../logger.js';

export const DELAY_CANARY_QUEUE = 'celery_delay_canary';
export const DELAY_CANARY_LOCK = 'celery_delay_canary.lock';

export interface DelayCanaryOptions {
  /** Seconds between two rounds of canaries. */
  intervalMs: number;
  /** Lateness past a level's bound (2^L s) that marks it late. */
  marginMs: number;
  /** The levels watched; a canary of 2^L s goes through level L alone. */
  levels: readonly number[];
  queue?: string;
  lockName?: string;
}

export interface LateLevel {
  level: number;
  /** How late past its bound the last canary of this level is (still counting when it has not arrived). */
  lateMs: number;
  since: number;
}

interface Outstanding {
  level: number;
  sentAt: number;
}

export class DelayCanary {
  private timer: NodeJS.Timeout | undefined;
  private lock: BrokerLock | undefined;
  private consuming = false;
  private readonly outstanding = new Map<string, Outstanding>();
  private readonly late = new Map<number, LateLevel>();
  /** Transit of the last canary of each level, ms. */
  readonly lastTransitMs = new Map<number, number>();
  private running = false;
  private readonly queue: string;

  constructor(
    private readonly broker: Pick<Broker, 'declareQueue' | 'sendLater' | 'consume' | 'cancel' | 'lock' | 'connected'>,
    private readonly logger: Logger,
    private readonly opts: DelayCanaryOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.queue = opts.queue ?? DELAY_CANARY_QUEUE;
  }

  get levels(): readonly number[] {
    return this.opts.levels;
  }

  /** This replica holds the canary's lock and sends the canaries. */
  get holder(): boolean {
    return this.lock?.held === true;
  }

  /** Levels whose last canary is late, lowest first. */
  lateLevels(): LateLevel[] {
    return [...this.late.values()].sort((a, b) => a.level - b.level);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => void this.round().catch((err: unknown) => this.logger.warn(`delay canary: ${String(err)}`)),
      this.opts.intervalMs,
    );
    this.timer.unref();
    void this.round().catch((err: unknown) => this.logger.warn(`delay canary: ${String(err)}`));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.consuming) await this.broker.cancel(this.queue).catch(() => undefined);
    this.consuming = false;
    await this.lock?.release();
  }

  /** One round: take the lock if free, check what is overdue, send the next canaries. */
  async round(): Promise<void> {
    if (this.running || !this.broker.connected) return;
    this.running = true;
    try {
      if (!this.holder) {
        // Lost with its connection: another replica takes over, and what this one measured no longer counts.
        this.lock ??= this.broker.lock(this.opts.lockName ?? DELAY_CANARY_LOCK).on('lost', () => {
          if (this.consuming) void this.broker.cancel(this.queue).catch(() => undefined);
          this.consuming = false;
          this.outstanding.clear();
          this.late.clear();
        });
        if (!(await this.lock.tryAcquire())) return;
        this.logger.info(`delay canary: this replica watches delay levels ${this.opts.levels.join(', ')}`);
      }
      if (!this.consuming) {
        await this.broker.declareQueue({ name: this.queue });
        await this.broker.consume(this.queue, (d) => this.arrived(d), { noAck: true });
        this.consuming = true;
      }
      this.checkOverdue();
      const pending = new Set([...this.outstanding.values()].map((o) => o.level));
      for (const level of this.opts.levels) {
        // One canary of a level in flight at a time: a stalled level is not fed one more each round.
        if (pending.has(level)) continue;
        const id = randomUUID();
        this.outstanding.set(id, { level, sentAt: this.now() });
        const body = Buffer.from(JSON.stringify({ canary: id, level }));
        await sendLater(
          this.broker,
          this.queue,
          {
            body,
            properties: {
              contentType: 'application/json',
              contentEncoding: 'utf-8',
              headers: {},
              deliveryMode: 1,
              priority: 0,
            },
          },
          2 ** level * 1000,
        );
      }
    } finally {
      this.running = false;
    }
  }

  private bound(level: number): number {
    return 2 ** level * 1000 + this.opts.marginMs;
  }

  /** Canaries not arrived past their bound: their level is late now. */
  checkOverdue(): void {
    const now = this.now();
    for (const o of this.outstanding.values()) {
      const lateMs = now - o.sentAt - this.bound(o.level);
      if (lateMs > 0) this.markLate(o.level, lateMs + this.opts.marginMs, false);
    }
  }

  private arrived(d: Delivery): void {
    let id: unknown;
    try {
      id = (JSON.parse(d.raw.body.toString('utf8')) as { canary?: unknown }).canary;
    } catch {
      return;
    }
    const o = typeof id === 'string' ? this.outstanding.get(id) : undefined;
    // One of an earlier holder, or of before a restart: nothing to measure.
    if (!o) return;
    this.outstanding.delete(id as string);
    const transit = this.now() - o.sentAt;
    this.lastTransitMs.set(o.level, transit);
    const lateMs = transit - 2 ** o.level * 1000;
    if (lateMs > this.opts.marginMs) this.markLate(o.level, lateMs, true);
    else if (this.late.delete(o.level)) {
      this.logger.info(
        `delay level ${o.level} flows again: its canary of ${2 ** o.level} s arrived after ${transit} ms`,
      );
    }
  }

  private markLate(level: number, lateMs: number, arrivedLate: boolean): void {
    const was = this.late.get(level);
    this.late.set(level, { level, lateMs, since: was?.since ?? this.now() });
    if (!was) {
      this.logger.error(
        `delay level ${level} is late: its canary of ${2 ** level} s ${arrivedLate ? 'arrived' : 'has not arrived'} ${Math.round(lateMs / 1000)} s past its bound; every countdown leaving this level is late (runbook: a stalled delay level)`,
        { delay_level: level, late_ms: lateMs },
      );
    }
  }
}
