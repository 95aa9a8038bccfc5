/**
 * The slots between the intake and the runs, as Celery's pool sits behind its consumer: an admitted job waits
 * here (Celery's "reserved") until a slot is free and its task's rate limit gives it a token, then the runs start
 * it. Each job is asked once more as it starts, since a revoke or a connection loss may have come while it waited.
 */
import type { Logger } from '../logger.js';
import type { Discard } from './discard.js';
import type { HeldJobs } from './held.js';
import type { Job } from './job.js';
import type { Runs } from './run/runs.js';
import type { TaskLimits } from './task-limits.js';

export interface SlotsOptions<D> {
  runs: Runs<D>;
  limits: TaskLimits;
  discard: Discard;
  /** Shared with the intake: a job held for its rate limit's token waits beside the ETA holds. */
  held: HeldJobs<Job>;
  logger: Logger;
  /** Runs at once at the start. */
  size: number;
  /** Whether jobs may start now (the worker is running). */
  running: () => boolean;
}

export class Slots<D = unknown> {
  private readonly reserved: Job[] = [];
  private idleWaiters: Array<() => void> = [];
  private slots: number;
  /** Reserved or held messages dropped unrun because their channel closed (the broker redelivers them). */
  droppedStale = 0;

  constructor(private readonly o: SlotsOptions<D>) {
    this.slots = o.size;
  }

  /** Runs at once: changed at run time by pool_grow/pool_shrink and autoscale. */
  get size(): number {
    return this.slots;
  }

  resize(slots: number): void {
    this.slots = Math.max(0, Math.floor(slots));
    this.pump();
  }

  get reservedCount(): number {
    return this.reserved.length;
  }

  reservedJobs(): readonly Job[] {
    return this.reserved;
  }

  /** An admitted job waits for a slot. */
  reserve(job: Job): void {
    this.reserved.push(job);
    this.pump();
  }

  /** Drops what is reserved, unrun: it stays unacked and returns to its queue when the connection closes. */
  clear(): void {
    this.reserved.length = 0;
  }

  /** On a connection loss: what came on the dead channel is dropped unrun (held.ts). */
  dropStale(): void {
    const n = this.o.held.dropStale(this.reserved);
    if (n === 0) return;
    this.droppedStale += n;
    this.o.logger.warn(
      `dropped ${n} reserved or held message(s) of a closed channel unrun; the broker redelivers them`,
      { dropped: n },
    );
  }

  /** Starts what the free slots and the rate limits allow. */
  pump(): void {
    const { runs, discard, limits, held, logger } = this.o;
    while (this.o.running() && runs.active.size < this.slots) {
      const job = this.reserved.shift();
      if (!job) break;
      if (!job.delivery.live) {
        this.droppedStale++;
        logger.warn(`dropped ${job.msg.task}[${job.msg.id}] unrun: its channel closed; the broker redelivers it`, {
          task: job.msg.task,
          id: job.msg.id,
        });
        continue;
      }
      // Asked again as the job starts, as Celery's request.py asks: a revoke may have come while it waited.
      if (discard.applies(job.msg)) {
        void discard.discard(job);
        continue;
      }
      // The rate limit counts runs as they start, so jobs that waited behind busy slots never start in a burst.
      const waitMs = limits.rateWait(job.task);
      if (waitMs > 0) {
        held.hold(job, waitMs, (due) => this.reserveDue(due));
        continue;
      }
      this.start(job);
    }
    if (runs.active.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves when no task is running. */
  idle(): Promise<void> {
    if (this.o.runs.active.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** A job held for its rate limit's next token, due: it waits for a slot again, unless revoked meanwhile. */
  private reserveDue(job: Job): void {
    if (!this.o.running()) return;
    if (this.o.discard.applies(job.msg)) void this.o.discard.discard(job);
    else this.reserve(job);
  }

  /** A run that ended as it started has freed its slot already: the loop in `pump` goes on. */
  private start(job: Job): void {
    const running = this.o.runs.start(job, this.o.limits.timesOf(job.task.name));
    if (running) void running.then(() => this.pump());
  }
}
