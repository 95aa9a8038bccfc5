/**
 * One task run, from start to outcome: early ack, STARTED, argument binding, the run under its time limits,
 * the autoretry (retrying.ts), then the after-run handler of the way it ended (after-run.ts: success, retry,
 * failure with the rest of the chain and the errbacks, reject, revoke, ignore). Returns the outcome; settling
 * the message is the settle stage's (`../settle/`).
 */
import type { ResultBackend } from '../../backend/backend.js';
import type { Delivery } from '../../broker/broker.js';
import { coerceError, hasCode } from '../../errors.js';
import { type Logger, lazyChild } from '../../logger.js';
import type { TaskMessage } from '../../protocol/types.js';
import { bindArguments } from '../../registry/args.js';
import type { TaskContext } from '../../registry/context.js';
import type { AnyTask } from '../../registry/define-task.js';
import { type Ending, type RunEnd, extendedFields, handleError, handleSuccess, storeResult } from './after-run.js';
import { type RunDefaults, type RunOptions, type TaskOverrides, resolveRunOptions } from './run-options.js';
import { createTaskContext } from './task-context.js';
import { type AckPolicy, ackOnStart } from '../settle/decide.js';
import type { TaskEvents } from '../events.js';
import type { Deadline, Deadlines } from './deadlines.js';
import { RunControl, type RunResult, runWithLimits } from './execute.js';
import { type RunScope, inRunScope } from './containment.js';
import type { TaskPublisher } from '../publisher.js';
import { autoretryCountdownFor } from './retrying.js';
import { tracing } from '../../tracing/tracing.js';

export type { RunDefaults } from './run-options.js';

export interface ActiveRun {
  key: string;
  delivery: Delivery;
  msg: TaskMessage;
  /** Aborts the run's signal (revoke with terminate, shutdown); the signal is made only if needed. */
  control: RunControl;
  policy: AckPolicy;
  startedAt: number;
  /** Set once the message has been settled (normally, or by a cold shutdown). */
  finalized: boolean;
  /** What the run waits on with other runs (`ctx.waitingOn`): they are reported past their wait budget once. */
  waitingOn: string | null;
  done: Promise<RunEnd>;
}

const UNREF = { ref: false } as const;

/** Reports a run still going after its wait budget: a task that waits holds a worker slot (ADR-030). */
function watchWaiting(deadlines: Deadlines, budget: number | null, report: () => void): Deadline | undefined {
  if (budget === null) return undefined;
  return deadlines.add(budget * 1000, report, UNREF);
}

export interface RunInput<D> {
  /** `sharedWait`: what the run waits on with other runs, if it said (`ctx.waitingOn`). */
  onOverWaitBudget: (msg: TaskMessage, log: Logger, sharedWait: string | null) => void;
  key: string;
  delivery: Delivery;
  msg: TaskMessage;
  task: AnyTask<unknown>;
  deps: D;
  backend: ResultBackend;
  publisher: TaskPublisher;
  logger: Logger;
  events: TaskEvents;
  nodeName: string;
  defaults: RunDefaults;
  /** The worker's one timer structure for time limits and wait budgets. */
  deadlines: Deadlines;
  /** This worker's time limits for the task (remote control), in place of the task's own. */
  overrides?: TaskOverrides;
}

export function runTask<D>(input: RunInput<D>): ActiveRun {
  const { task, msg, defaults } = input;
  const options = resolveRunOptions(msg, task, defaults, input.overrides);
  const policy = options.policy;
  // `done` is the run's own promise, set as it starts (a placeholder promise would cost one per run).
  const run: Omit<ActiveRun, 'done'> & { done: Promise<RunEnd> | undefined } = {
    key: input.key,
    delivery: input.delivery,
    msg,
    control: new RunControl(),
    policy,
    startedAt: Date.now(),
    finalized: false,
    waitingOn: null,
    done: undefined,
  };
  const traced = tracing();
  run.done = traced
    ? traced.run(msg, input.delivery.queue, () => execute(input, run, options))
    : execute(input, run, options);
  return run as ActiveRun;
}

async function execute<D>(input: RunInput<D>, run: Omit<ActiveRun, 'done'>, options: RunOptions): Promise<RunEnd> {
  const { task, msg, backend, publisher, events, delivery } = input;
  const log = lazyChild(input.logger, () => ({
    task: msg.task,
    id: msg.id,
    queue: delivery.queue,
    retries: msg.retries,
  }));
  // The runtime counts from after STARTED is stored.
  let t0 = 0;
  const ending: Ending = {
    msg,
    log,
    publisher,
    backend,
    events,
    ignoreResult: options.ignoreResult,
    runtime: () => (performance.now() - t0) / 1000,
    ...(input.defaults.resultExtended ? { extended: extendedFields(msg, input.nodeName, delivery.routingKey) } : {}),
  };

  // The one settling outside `decide` (its header says why): an early-ack task is acked as it starts, and the
  // ack is in the broker before the task runs: a worker killed now loses the run, never runs it twice.
  if (ackOnStart(run.policy)) {
    delivery.ack();
    await delivery.acked?.();
  }
  events.started(msg);
  if (options.trackStarted) {
    await storeResult(ending, 'STARTED', { pid: process.pid, hostname: input.nodeName }, null, null);
  }
  t0 = performance.now();

  const context = createTaskContext<D>({
    msg,
    task,
    delivery,
    publisher,
    backend,
    nodeName: input.nodeName,
    deps: input.deps,
    logger: log,
    control: run.control,
    waitingOn: (what) => {
      run.waitingOn = what;
    },
  });
  const ctx = context.ctx;

  let error: Error;
  let abandoned = false;
  try {
    const params = bindArguments(task, msg.args, msg.kwargs);
    context.bind(params);
    const watchdog = watchWaiting(input.deadlines, options.waitBudget, () =>
      input.onOverWaitBudget(msg, log, run.waitingOn),
    );
    // Everything the task's code starts carries this scope: an error escaping it later ends this run, not the process.
    const scope: RunScope = { task: msg.task, id: msg.id, fail: (e) => run.control.fail(e) };
    let r: RunResult;
    try {
      r = await runWithLimits(
        () => inRunScope(scope, () => Promise.resolve(task.run(params, ctx as TaskContext<unknown>))),
        options.limits,
        run.control,
        input.deadlines,
      );
    } finally {
      watchdog?.cancel();
    }
    if (r.ok) {
      const ended = handleSuccess(ending, r.value);
      return ended instanceof Promise ? await ended : ended;
    }
    error = r.error;
    abandoned = r.abandoned ?? false;
  } catch (err) {
    error = coerceError(err);
  }
  if (run.finalized) return { outcome: { kind: 'cancelled' }, reason: 'cancelled' };

  // Autoretry (Celery `autoretry_for`): the retry is published, and its `Retry` (or why it could not be) is the error.
  const countdown = autoretryCountdownFor(task, msg, error, abandoned);
  if (countdown !== null) {
    try {
      await ctx.retry({ exc: error, countdown });
    } catch (err) {
      error = coerceError(err);
    }
  }
  return handleError(ending, error, abandoned && !hasCode(error, 'TASK_REVOKED'));
}
