/**
 * Rate and time limits as this worker runs them. Celery's `rate_limit` and `time_limit` remote-control
 * commands change them for this worker only: they are kept here, never written into the task objects,
 * which are module-level and shared by every worker in the process (and by the tests).
 */
import type { AnyTask } from '../registry/define-task.js';
import { TokenBucket, parseRate } from './rate-limit.js';
import type { TaskOverrides } from './run/run-options.js';

export class TaskLimits {
  /** A rate set by remote control; null removes the task's own. */
  private readonly rates = new Map<string, string | null>();
  private readonly times = new Map<string, TaskOverrides>();
  private readonly buckets = new Map<string, TokenBucket>();

  rateOf(task: Pick<AnyTask<unknown>, 'name' | 'rateLimit'>): string | undefined {
    return this.rates.has(task.name) ? (this.rates.get(task.name) ?? undefined) : task.rateLimit;
  }

  /** Ms until the task's rate limit lets it run (0 = now); takes the token when it does. */
  rateWait(task: Pick<AnyTask<unknown>, 'name' | 'rateLimit'>): number {
    const rate = this.rateOf(task);
    if (!rate) return 0;
    let bucket = this.buckets.get(task.name);
    if (!bucket) {
      const perSecond = parseRate(rate);
      if (perSecond <= 0) return 0;
      bucket = new TokenBucket(perSecond);
      this.buckets.set(task.name, bucket);
    }
    return bucket.take();
  }

  /** A new rate for a task (null: none), its bucket reset. Throws for a bad rate string. */
  setRate(taskName: string, rate: string | null): void {
    if (rate) parseRate(rate);
    this.rates.set(taskName, rate || null);
    this.buckets.delete(taskName);
  }

  /** New time limits for a task, in seconds, in place of its own (null: none, the worker's defaults apply). */
  setTimes(taskName: string, soft: number | null, hard: number | null): void {
    this.times.set(taskName, { softTimeLimit: soft ?? undefined, timeLimit: hard ?? undefined });
  }

  /** The time limits set for a task here; undefined when none were (the task's own apply). */
  timesOf(taskName: string): TaskOverrides | undefined {
    return this.times.get(taskName);
  }
}
