/**
 * The scheduler: while it holds the lock, it sends each due entry as a Celery task message (accepted by our
 * worker and by Python's), records each send as it makes it, and sleeps until the next entry is due. It warns, and
 * says so in a metric, when it sends to a queue that no consumer reads.
 */
import type { Broker, BrokerLock } from '../lib/broker/broker.js';
import type { Logger } from '../lib/logger.js';
import { TaskPublisher } from '../lib/worker/publisher.js';
import { Counter, Gauge, Registry } from 'prom-client';
import { randomUUID } from 'node:crypto';
import type { BeatEntry } from '../tasks/beat-schedule.js';
import { type EntryStore, KeptState, type ScheduleStore } from './store.js';
import { isDue, nextRun } from '../lib/beat/schedules.js';

/**
 * The sender lock: the broker's (`Broker.lock`, renewed on its own), or one renewed on each tick as RedBeat
 * renews its lock (`extend`, false once it is lost).
 */
export type Lock = Pick<BrokerLock, 'held' | 'tryAcquire' | 'release' | 'on'> & { extend?(): Promise<boolean> };

/** How long a disabled entry waits before it is looked at again (RedBeat's 5 s). */
const DISABLED_RECHECK_MS = 5000;

export class BeatMetrics {
  readonly registry = new Registry();
  readonly sent = new Counter({
    name: 'smarter_beat_sent_total',
    help: 'Tasks sent by Beat',
    labelNames: ['entry', 'task', 'queue'],
    registers: [this.registry],
  });
  readonly consumers = new Gauge({
    name: 'smarter_beat_queue_consumers',
    help: 'Consumers of each queue Beat sends to, as of its last send (0 = never processed)',
    labelNames: ['queue'],
    registers: [this.registry],
  });
  readonly lockHeld = new Gauge({
    name: 'smarter_beat_lock_held',
    help: '1 while this replica holds the sender lock',
    registers: [this.registry],
  });
}

export interface BeatOptions {
  /** The entries this Beat ships (Celery's `beat_schedule`). */
  entries: BeatEntry[];
  /** Last runs only (file, hash), or the whole schedule (RedBeat's keys). */
  store: ScheduleStore | EntryStore;
  broker: Broker;
  lock: Lock;
  logger: Logger;
  metrics?: BeatMetrics;
  now?: () => number;
  /** Longest sleep between ticks (Celery's beat_max_loop_interval); also how often a standby tries the lock. */
  maxLoopMs?: number;
}

export class Beat {
  private readonly store: EntryStore;
  private stopping = false;
  private wake: (() => void) | null = null;
  private loopDone: Promise<void> | null = null;
  private readonly publisher: TaskPublisher;
  private readonly now: () => number;
  readonly metrics: BeatMetrics;

  constructor(private readonly o: BeatOptions) {
    this.now = o.now ?? Date.now;
    this.metrics = o.metrics ?? new BeatMetrics();
    this.store = 'plan' in o.store ? o.store : new KeptState(o.store);
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
    await this.store.close();
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
        } else if (this.o.lock.extend && !(await this.o.lock.extend())) {
          continue;
        }
        const next = await this.tick();
        await this.sleep(Math.min(next, maxLoop));
      } catch (err) {
        this.o.logger.error('beat: tick failed; trying again', { error: String(err) });
        await this.sleep(maxLoop);
      }
    }
  }

  /** On taking the lock: the store is the truth (another replica, or RedBeat, may have sent). */
  private async takeOver(): Promise<void> {
    await this.store.install(this.o.entries, this.now());
    this.o.logger.info(`beat: holding the lock; schedule from ${this.store.description}`, {
      entries: this.o.entries.length,
    });
  }

  /** Sends what is due; returns the milliseconds until the next entry is due. */
  async tick(): Promise<number> {
    let next = Number.POSITIVE_INFINITY;
    for (const { entry: e, state: s, enabled } of await this.store.plan()) {
      if (!this.o.lock.held || this.stopping) break;
      if (!enabled) {
        next = Math.min(next, DISABLED_RECHECK_MS);
        continue;
      }
      const now = this.now();
      // Never run (RedBeat's meta without a last run): due at once, as RedBeat has it.
      const { due, nextInMs } = s
        ? isDue(e.schedule, s.lastRunAt, now)
        : { due: true, nextInMs: nextRun(e.schedule, now) - now };
      if (due) {
        // Recorded before it is sent, as Celery's `reserve` and RedBeat do: a sender killed in between skips
        // this run rather than letting the next holder send it again. A failed send is put back, to be retried.
        const ran = { lastRunAt: now, totalRunCount: (s?.totalRunCount ?? 0) + 1 };
        await this.store.ran(e, ran);
        try {
          await this.send(e, ran.totalRunCount);
        } catch (err) {
          if (s) await this.store.ran(e, s);
          throw err;
        }
      }
      next = Math.min(next, nextInMs);
    }
    return next;
  }

  private async send(e: BeatEntry, run: number): Promise<void> {
    const queue = e.options.queue ?? 'celery';
    const stats = await this.o.broker.inspectQueue(queue);
    const consumers = stats?.consumerCount ?? 0;
    this.metrics.consumers.set({ queue }, consumers);
    if (consumers === 0) {
      this.o.logger.warn(
        `beat: ${e.name} sends ${e.task} to queue ${queue}, which no worker consumes now: it will wait there until one does`,
      );
    }
    const id = await this.publisher.apply(e.task, e.args, e.kwargs, {
      queue,
      ...(e.options.expires !== undefined ? { expires: e.options.expires } : {}),
      ...(e.options.priority !== undefined ? { priority: e.options.priority } : {}),
    });
    this.metrics.sent.inc({ entry: e.name, task: e.task, queue });
    this.o.logger.info(`beat: sending due task ${e.name} (${e.task})`, { id, queue, run });
  }
}
