/**
 * The scheduler: while it holds the lock, it sends each due entry as a Celery task message (accepted by our
 * worker and by Python's), records the send at once, and sleeps until the next entry is due. It warns, and
 * says so in a metric, when it sends to a queue that no consumer reads.
 */
import type { Broker, BrokerLock } from '../lib/broker/broker.js';
import type { Logger } from '../lib/logger.js';
import { TaskPublisher } from '../lib/worker/publisher.js';
import { Counter, Gauge, Registry } from 'prom-client';
import { randomUUID } from 'node:crypto';
import type { BeatEntry } from './smarter-schedule.js';
import { type EntryState, type ScheduleStore } from './store.js';
import { isDue } from './schedules.js';

/** The sender lock: the broker's (`Broker.lock`), or any lock with the same promise. */
export type Lock = Pick<BrokerLock, 'held' | 'tryAcquire' | 'release' | 'on'>;

export class BeatMetrics {
  readonly registry = new Registry();
  readonly sent = new Counter({ name: 'smarter_beat_sent_total', help: 'Tasks sent by Beat', labelNames: ['entry', 'task', 'queue'], registers: [this.registry] });
  readonly consumers = new Gauge({ name: 'smarter_beat_queue_consumers', help: 'Consumers of each queue Beat sends to, as of its last send (0 = never processed)', labelNames: ['queue'], registers: [this.registry] });
  readonly lockHeld = new Gauge({ name: 'smarter_beat_lock_held', help: '1 while this replica holds the sender lock', registers: [this.registry] });
}

export interface BeatOptions {
  entries: BeatEntry[];
  store: ScheduleStore;
  broker: Broker;
  lock: Lock;
  logger: Logger;
  metrics?: BeatMetrics;
  now?: () => number;
  /** Longest sleep between ticks (Celery's beat_max_loop_interval); also how often a standby tries the lock. */
  maxLoopMs?: number;
}

export class Beat {
  private state = new Map<string, EntryState>();
  private stopping = false;
  private wake: (() => void) | null = null;
  private loopDone: Promise<void> | null = null;
  private readonly publisher: TaskPublisher;
  private readonly now: () => number;
  readonly metrics: BeatMetrics;

  constructor(private readonly o: BeatOptions) {
    this.now = o.now ?? Date.now;
    this.metrics = o.metrics ?? new BeatMetrics();
    this.publisher = new TaskPublisher(o.broker, {
      defaultQueue: 'celery',
      queueOf: () => undefined,
      origin: `gen${process.pid}@${process.env.HOSTNAME ?? 'localhost'}`,
      oid: randomUUID(),
      delay: false,
      now: this.now,
    });
    o.lock.on('lost', () => {
      this.metrics.lockHeld.set(0);
      this.wake?.();
    });
  }

  async start(): Promise<void> {
    await this.o.broker.connect();
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loopDone;
    await this.o.lock.release();
    this.metrics.lockHeld.set(0);
    await this.o.store.close();
    await this.o.broker.close();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private async loop(): Promise<void> {
    const maxLoop = this.o.maxLoopMs ?? 5000;
    while (!this.stopping) {
      try {
        if (!this.o.lock.held) {
          if (!(await this.o.lock.tryAcquire())) {
            await this.sleep(maxLoop);
            continue;
          }
          this.metrics.lockHeld.set(1);
          await this.takeOver();
        }
        const next = await this.tick();
        await this.sleep(Math.min(next, maxLoop));
      } catch (err) {
        this.o.logger.error('beat: tick failed; trying again', { error: String(err) });
        await this.sleep(maxLoop);
      }
    }
  }

  /** On taking the lock: the store is the truth (another replica may have sent); new entries start now, as in Celery. */
  private async takeOver(): Promise<void> {
    this.state = await this.o.store.load();
    const now = this.now();
    for (const e of this.o.entries) {
      if (!this.state.has(e.name)) {
        const s = { lastRunAt: now, totalRunCount: 0 };
        this.state.set(e.name, s);
        await this.o.store.save(e.name, s);
      }
    }
    this.o.logger.info(`beat: holding the lock; schedule from ${this.o.store.description}`, { entries: this.o.entries.length });
  }

  /** Sends what is due; returns the milliseconds until the next entry is due. */
  async tick(): Promise<number> {
    let next = Number.POSITIVE_INFINITY;
    for (const e of this.o.entries) {
      if (!this.o.lock.held || this.stopping) break;
      const s = this.state.get(e.name) ?? { lastRunAt: this.now(), totalRunCount: 0 };
      const now = this.now();
      const { due, nextInMs } = isDue(e.schedule, s.lastRunAt, now);
      if (due) {
        await this.send(e);
        const ran = { lastRunAt: now, totalRunCount: s.totalRunCount + 1 };
        this.state.set(e.name, ran);
        await this.o.store.save(e.name, ran);
      }
      next = Math.min(next, nextInMs);
    }
    return next;
  }

  private async send(e: BeatEntry): Promise<void> {
    const queue = e.options.queue ?? 'celery';
    const stats = await this.o.broker.inspectQueue(queue);
    const consumers = stats?.consumerCount ?? 0;
    this.metrics.consumers.set({ queue }, consumers);
    if (consumers === 0) {
      this.o.logger.warn(`beat: ${e.name} sends ${e.task} to queue ${queue}, which no worker consumes now: it will wait there until one does`);
    }
    const id = await this.publisher.apply(e.task, e.args, e.kwargs, {
      queue,
      ...(e.options.expires !== undefined ? { expires: e.options.expires } : {}),
      ...(e.options.priority !== undefined ? { priority: e.options.priority } : {}),
    });
    this.metrics.sent.inc({ entry: e.name, task: e.task, queue });
    this.o.logger.info(`beat: sending due task ${e.name} (${e.task})`, { id, queue });
  }
}
