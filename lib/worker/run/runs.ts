/**
 * The runs under way in one worker, as Celery's pool holds its requests: each job the slots hand over is run
 * (run-task.ts) and its outcome handed to the settler; a cold shutdown gives back what is still going.
 */
import type { ResultBackend } from '../../backend/backend.js';
import { coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { TaskEvents } from '../events.js';
import type { Job } from '../job.js';
import type { TaskPublisher } from '../publisher.js';
import { ReportedOnce } from '../settle/dead-letter.js';
import type { Settler } from '../settle/settler.js';
import { Deadlines } from './deadlines.js';
import type { RunDefaults, TaskOverrides } from './run-options.js';
import { type ActiveRun, runTask } from './run-task.js';
import type { RunEnd } from './after-run.js';

export interface RunsOptions<D> {
  deps: D;
  backend: ResultBackend;
  publisher: TaskPublisher;
  settler: Settler;
  logger: Logger;
  events: TaskEvents;
  nodeName: string;
  defaults: RunDefaults;
}

export class Runs<D> {
  readonly active = new Map<string, ActiveRun>();
  readonly processed = new Map<string, number>();
  /** Runs reported for waiting past their budget, by task name. */
  readonly overWaitBudget = new Map<string, number>();
  /** What runs waited on together past their budget, reported once each (bounded). */
  private readonly sharedWaitsReported = new ReportedOnce(1000);
  /** Time limits and wait budgets of every run, on one timer. */
  private readonly deadlines = new Deadlines();
  /** Keys of `active`: unique within this worker, which is all they need (a UUID per run cost a random fill). */
  private seq = 0;

  constructor(private readonly o: RunsOptions<D>) {}

  /**
   * Runs a job and settles its message; returns once both are done (a promise only if either waited), and never
   * rejects (an error is logged).
   */
  start(job: Job, overrides: TaskOverrides | undefined): Promise<void> | void {
    const key = String(++this.seq);
    let run: ActiveRun;
    try {
      run = this.run(job, key, overrides);
    } catch (err) {
      this.failed(job, key, err, 'running');
      return;
    }
    this.active.set(key, run);
    const { done } = run;
    if (done instanceof Promise) {
      return done.then(
        (end) => this.settle(job, key, run, end),
        (err: unknown) => this.failed(job, key, err),
      );
    }
    return this.settle(job, key, run, done);
  }

  private run(job: Job, key: string, overrides: TaskOverrides | undefined): ActiveRun {
    const { o } = this;
    return runTask({
      key,
      delivery: job.delivery,
      msg: job.msg,
      task: job.task,
      deps: o.deps,
      backend: o.backend,
      publisher: o.publisher,
      logger: o.logger,
      events: o.events,
      nodeName: o.nodeName,
      defaults: o.defaults,
      deadlines: this.deadlines,
      overrides,
      onOverWaitBudget: (msg, log, sharedWait) => {
        this.overWaitBudget.set(msg.task, (this.overWaitBudget.get(msg.task) ?? 0) + 1);
        // Runs waiting on one shared thing (a batch) are one report: the first of them says it for all.
        if (sharedWait !== null) {
          if (!this.sharedWaitsReported.first(sharedWait)) return;
          log.warn(
            `Task ${msg.task}[${msg.id}] is still running after ${o.defaults.waitBudget ?? 0}s, waiting on ${sharedWait} with other runs (reported once for them all): a task that waits holds a worker`,
            { outcome: 'over-wait-budget', waiting_on: sharedWait },
          );
          return;
        }
        log.warn(
          `Task ${msg.task}[${msg.id}] is still running after ${o.defaults.waitBudget ?? 0}s: a task that waits holds a worker; check once and use ctx.checkAgain() (ADR-030)`,
          { outcome: 'over-wait-budget' },
        );
      },
    });
  }

  private settle(job: Job, key: string, run: ActiveRun, { outcome, reason }: RunEnd): Promise<void> | void {
    try {
      if (!run.finalized) {
        run.finalized = true;
        const settling = this.o.settler.settle(job.delivery, outcome, reason, run.policy);
        if (settling) {
          return settling.then(
            () => this.finished(job, key),
            (err: unknown) => this.failed(job, key, err),
          );
        }
      }
    } catch (err) {
      this.failed(job, key, err);
      return;
    }
    this.finished(job, key);
  }

  private finished(job: Job, key: string): void {
    this.processed.set(job.msg.task, (this.processed.get(job.msg.task) ?? 0) + 1);
    this.active.delete(key);
  }

  private failed(job: Job, key: string, err: unknown, what = 'settling'): void {
    this.o.logger.error(`unexpected error ${what} ${job.msg.task}[${job.msg.id}]`, { error: coerceError(err).stack });
    this.active.delete(key);
  }

  /** Cold shutdown of the runs under way: abort their signals, then give their messages back (settler.ts). */
  async cancelAll(): Promise<void> {
    for (const run of this.active.values()) {
      if (run.finalized) continue;
      run.finalized = true;
      run.control.abort(new Error('worker shutdown: task cancelled'));
      const { delivery, msg } = run;
      this.o.logger.warn(`cancelled ${msg.task}[${msg.id}] by shutdown; it will run again`, {
        task: msg.task,
        id: msg.id,
        queue: delivery.queue,
      });
      await this.o.settler.giveBack(delivery, msg, run.policy);
    }
  }
}
