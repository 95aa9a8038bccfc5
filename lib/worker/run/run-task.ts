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
  /** The run's end: at once when it ended within the turn that started it. */
  done: RunEnd | Promise<RunEnd>;
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
  // `done` is the run's end or its promise, set as it starts (a placeholder promise would cost one per run).
  const run: Omit<ActiveRun, 'done'> & { done: RunEnd | Promise<RunEnd> | undefined } = {
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
    ? traced.run(msg, input.delivery.queue, async () => execute(input, run, options))
    : execute(input, run, options);
  return run as ActiveRun;
}

/**
 * The run from its start to its outcome. Each step that may wait (an early ack's confirm, STARTED stored, the
 * task's code, the result stored) continues synchronously when it did not: a task that returns a value and
 * stores no result runs and ends within the turn that started it, with no promise of ours.
 */
function execute<D>(input: RunInput<D>, run: Omit<ActiveRun, 'done'>, options: RunOptions): RunEnd | Promise<RunEnd> {
  const { msg, delivery } = input;
  const log = lazyChild(input.logger, () => ({
    task: msg.task,
    id: msg.id,
    queue: delivery.queue,
    retries: msg.retries,
  }));
  const ending: Ending & { t0: number } = {
    msg,
    log,
    publisher: input.publisher,
    backend: input.backend,
    events: input.events,
    ignoreResult: options.ignoreResult,
    // The runtime counts from after STARTED is stored.
    t0: 0,
    runtime: () => (performance.now() - ending.t0) / 1000,
    ...(input.defaults.resultExtended ? { extended: extendedFields(msg, input.nodeName, delivery.routingKey) } : {}),
  };
  const steps: Steps<D> = { input, run, options, ending };
  // The one settling outside `decide` (its header says why): an early-ack task is acked as it starts, and the
  // ack is in the broker before the task runs: a worker killed now loses the run, never runs it twice.
  if (ackOnStart(run.policy)) {
    delivery.ack();
    const acked = delivery.acked?.();
    if (acked) return acked.then(() => started(steps));
  }
  return started(steps);
}

/** What each step of a run after the first is handed. */
interface Steps<D> {
  input: RunInput<D>;
  run: Omit<ActiveRun, 'done'>;
  options: RunOptions;
  ending: Ending & { t0: number };
}

function started<D>(steps: Steps<D>): RunEnd | Promise<RunEnd> {
  const { input, options, ending } = steps;
  input.events.started(input.msg);
  if (options.trackStarted) {
    return storeResult(ending, 'STARTED', { pid: process.pid, hostname: input.nodeName }, null, null).then(() =>
      runCode(steps),
    );
  }
  return runCode(steps);
}

function runCode<D>(steps: Steps<D>): RunEnd | Promise<RunEnd> {
  const { input, run, options, ending } = steps;
  const { task, msg, delivery, publisher, backend } = input;
  ending.t0 = performance.now();
  const context = createTaskContext<D>({
    msg,
    task,
    delivery,
    publisher,
    backend,
    nodeName: input.nodeName,
    deps: input.deps,
    logger: ending.log,
    control: run.control,
    waitingOn: (what) => {
      run.waitingOn = what;
    },
  });
  const ctx = context.ctx;
  const failed = (err: unknown, abandoned = false) => afterError(steps, ctx, coerceError(err), abandoned);
  const ended = (r: RunResult): RunEnd | Promise<RunEnd> => {
    if (!r.ok) return failed(r.error, r.abandoned ?? false);
    try {
      const done = handleSuccess(ending, r.value);
      return done instanceof Promise ? done.catch(failed) : done;
    } catch (err) {
      return failed(err);
    }
  };
  let r: RunResult | Promise<RunResult>;
  let watchdog: Deadline | undefined;
  try {
    const params = bindArguments(task, msg.args, msg.kwargs);
    context.bind(params);
    watchdog = watchWaiting(input.deadlines, options.waitBudget, () =>
      input.onOverWaitBudget(msg, ending.log, run.waitingOn),
    );
    // Everything the task's code starts carries this scope: an error escaping it later ends this run, not the process.
    const scope: RunScope = { task: msg.task, id: msg.id, fail: (e) => run.control.fail(e) };
    r = runWithLimits(
      () => inRunScope(scope, () => task.run(params, ctx as TaskContext<unknown>)),
      options.limits,
      run.control,
      input.deadlines,
    );
  } catch (err) {
    watchdog?.cancel();
    return failed(err);
  }
  if (r instanceof Promise) {
    const watched = watchdog;
    return r.then((result) => {
      watched?.cancel();
      return ended(result);
    });
  }
  watchdog?.cancel();
  return ended(r);
}

/** A run that failed: its autoretry (Celery `autoretry_for`) published if it has one, then the failure's handling. */
async function afterError<D>(steps: Steps<D>, ctx: TaskContext<D>, err: Error, abandoned: boolean): Promise<RunEnd> {
  const { input, run, ending } = steps;
  let error = err;
  if (run.finalized) return { outcome: { kind: 'cancelled' }, reason: 'cancelled' };
  // The retry is published, and its `Retry` (or why it could not be) is the error.
  const countdown = autoretryCountdownFor(input.task, input.msg, error, abandoned);
  if (countdown !== null) {
    try {
      await ctx.retry({ exc: error, countdown });
    } catch (e) {
      error = coerceError(e);
    }
  }
  return handleError(ending, error, abandoned && !hasCode(error, 'TASK_REVOKED'));
}
