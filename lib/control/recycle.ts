/**
 * Recycling, Celery's `--max-tasks-per-child` and `--max-memory-per-child` for one process: as each task starts
 * the count, and as each ends the resident memory, are checked; past a
 * bound, or on `pool_restart`, the worker is asked to go: it stops taking messages, lets its runs finish (a
 * warm shutdown: what it holds unstarted goes back to the queue), and exits with `RECYCLE_EXIT_CODE`, on
 * which its supervisor (`celery worker`, supervisor.ts) starts a fresh one. Nothing is lost or run twice:
 * a run is finished and settled before the exit, and a message not started is returned unacked.
 */
import type { Logger } from '../logger.js';
import type { TaskEvents } from '../worker/events.js';
import { abandonedRunsStillGoing } from '../worker/run/execute.js';

/** The exit code of a worker that asks to be replaced (EX_TEMPFAIL: "try again"). */
export const RECYCLE_EXIT_CODE = 75;

export interface RecycleLimits {
  maxTasks: number | null;
  maxMemoryKiB: number | null;
  /** Runs abandoned (hard time limit, terminate) whose code still goes, checked as each task ends. */
  maxAbandoned?: number | null;
}

export class Recycler {
  private started = 0;
  private asked = false;

  constructor(
    private readonly limits: RecycleLimits,
    /**
     * Stops the worker taking messages now (synchronously: no further task starts), then shuts it down warm
     * and exits with RECYCLE_EXIT_CODE; called once.
     */
    private readonly recycle: (reason: string) => void,
    private readonly logger: Logger,
    private readonly rssBytes: () => number = () => process.memoryUsage.rss(),
    private readonly abandoned: () => number = abandonedRunsStillGoing,
  ) {}

  get enabled(): boolean {
    return (
      this.limits.maxTasks !== null || this.limits.maxMemoryKiB !== null || (this.limits.maxAbandoned ?? null) !== null
    );
  }

  /** The worker's task events it listens to: a start counts, an end checks the memory. */
  readonly events: Pick<TaskEvents, 'started' | 'succeeded' | 'failed' | 'retried'> = {
    started: () => this.taskStarted(),
    succeeded: () => this.taskEnded(),
    failed: () => this.taskEnded(),
    retried: () => this.taskEnded(),
  };

  /** The Nth start of `--max-tasks-per-child N` is the last: it runs, and nothing after it. */
  taskStarted(): void {
    this.started++;
    const max = this.limits.maxTasks;
    if (max !== null && this.started >= max) this.request(`ran ${this.started} tasks (--max-tasks-per-child ${max})`);
  }

  taskEnded(): void {
    const abandonedMax = this.limits.maxAbandoned ?? null;
    if (abandonedMax !== null && !this.asked) {
      const going = this.abandoned();
      if (going >= abandonedMax) {
        this.request(
          `${going} runs abandoned at their time limit still hold their resources (SMARTER_WORKER_MAX_ABANDONED_RUNS ${abandonedMax})`,
        );
        return;
      }
    }
    const max = this.limits.maxMemoryKiB;
    if (max === null || this.asked) return;
    const kib = Math.round(this.rssBytes() / 1024);
    if (kib > max) this.request(`resident memory ${kib} KiB after a task (--max-memory-per-child ${max})`);
  }

  /** Recycle now (pool_restart, or a bound passed); once. */
  request(reason: string): boolean {
    if (this.asked) return false;
    this.asked = true;
    this.logger.warn(
      `recycling: ${reason}; taking no more messages, finishing the running tasks, then a fresh process`,
    );
    this.recycle(reason);
    return true;
  }
}
