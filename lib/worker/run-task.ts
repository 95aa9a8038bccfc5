/**
 * One task run, from start to outcome: early ack, STARTED, argument binding, the run under its time limits,
 * then Celery's after-run steps in Celery's order (callbacks and chain, then the result; or the failure,
 * errbacks and the failure of the rest of the chain; or the retry). Returns the outcome; settling the
 * message is the worker's job (`decide`).
 */
import type { ResultBackend } from '../backend/backend.js';
import { type ChildTuple, type StoredResult, type TaskState, childTuple, exceptionInfo, tracebackOf } from '../backend/meta.js';
import type { Delivery } from '../broker/broker.js';
import { type RetryTaskError, coerceError, hasCode } from '../errors.js';
import { type Logger, lazyChild } from '../logger.js';
import { pyRepr, truncate } from '../protocol/repr.js';
import type { TaskMessage } from '../protocol/types.js';
import { bindArguments } from '../registry/args.js';
import { Rescheduled, type TaskContext } from '../registry/context.js';
import type { AnyTask } from '../registry/define-task.js';
import { autoretryable, classify } from './classify.js';
import { type RunDefaults, type RunOptions, type TaskOverrides, resolveRunOptions } from './run-options.js';
import { createTaskContext } from './task-context.js';
import { type AckPolicy, type Outcome, ackOnStart } from './decide.js';
import type { TaskEvents } from './events.js';
import type { Deadline, Deadlines } from './deadlines.js';
import { RunControl, runWithLimits } from './execute.js';
import type { TaskPublisher } from './publisher.js';
import { autoretryCountdown, shouldAutoretry } from './retry.js';

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
  done: Promise<{ outcome: Outcome; reason: string }>;
}

/** Reports a run still going after its wait budget: a task that waits holds a worker slot (ADR-030). */
function watchWaiting(deadlines: Deadlines, budget: number | null, report: () => void): Deadline | undefined {
  if (budget === null) return undefined;
  return deadlines.add(budget * 1000, report, { ref: false });
}

export interface RunInput<D> {
  onOverWaitBudget: (msg: TaskMessage, log: Logger) => void;
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
  const run: ActiveRun = {
    key: input.key,
    delivery: input.delivery,
    msg,
    control: new RunControl(),
    policy,
    startedAt: Date.now(),
    finalized: false,
    done: Promise.resolve({ outcome: { kind: 'succeeded' }, reason: '' }),
  };
  run.done = execute(input, run, options);
  return run;
}

async function execute<D>(input: RunInput<D>, run: ActiveRun, options: RunOptions): Promise<{ outcome: Outcome; reason: string }> {
  const { task, msg, backend, publisher, events, delivery } = input;
  const log = lazyChild(input.logger, () => ({ task: msg.task, id: msg.id, queue: delivery.queue, retries: msg.retries }));
  const { ignoreResult, limits } = options;
  const target = { replyTo: msg.replyTo, correlationId: msg.correlationId };
  const store = async (state: TaskState, result: unknown, traceback: string | null, children: ChildTuple[] | null) => {
    if (ignoreResult) return;
    const r: StoredResult = { taskId: msg.id, state, result, traceback, children, groupId: msg.group, parentId: msg.parentId };
    try {
      await backend.store(r, target);
    } catch (err) {
      log.error(`could not store ${state} for ${msg.task}[${msg.id}]`, { error: coerceError(err).message });
    }
  };

  if (ackOnStart(run.policy)) {
    // The ack is in the broker before the task runs: a worker killed now loses the run, never runs it twice.
    delivery.ack();
    await delivery.acked?.();
  }
  events.started(msg);
  if (options.trackStarted) await store('STARTED', { pid: process.pid, hostname: input.nodeName }, null, null);

  const t0 = performance.now();
  const runtime = () => (performance.now() - t0) / 1000;

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
  });
  const ctx = context.ctx;
  const retry = (o: Parameters<TaskContext<D>['retry']>[0]) => ctx.retry(o);

  let error: Error;
  let abandoned = false;
  try {
    const params = bindArguments(task, msg.args, msg.kwargs);
    context.bind(params);
    const watchdog = watchWaiting(input.deadlines, options.waitBudget, () => input.onOverWaitBudget(msg, log));
    const r = await runWithLimits(() => Promise.resolve(task.run(params, ctx as TaskContext<unknown>)), limits, run.control, input.deadlines).finally(
      () => watchdog?.cancel(),
    );
    if (r.ok) return await succeeded(r.value);
    error = r.error;
    abandoned = r.abandoned ?? false;
  } catch (err) {
    error = coerceError(err);
  }
  if (run.finalized) return { outcome: { kind: 'cancelled' }, reason: 'cancelled' };

  // Autoretry (Celery `autoretry_for`): not for bad arguments, which fail the same way every time.
  if (autoretryable(error) && !abandoned && shouldAutoretry(task.retry, error)) {
    try {
      await retry({ exc: error, countdown: autoretryCountdown(task.retry ?? {}, msg.retries) });
    } catch (err) {
      error = coerceError(err);
    }
  }
  return failedWith(error, abandoned && !hasCode(error, 'TASK_REVOKED'));

  async function succeeded(returned: unknown): Promise<{ outcome: Outcome; reason: string }> {
    // A rescheduled check ends like Python's `apply_async(...); return None`.
    const value = returned instanceof Rescheduled ? null : returned;
    if (returned instanceof Rescheduled) {
      log.info(`Task ${msg.task}[${msg.id}] not ready; check ${returned.attempt} in ${returned.afterSeconds}s as ${returned.nextId}`, {
        outcome: 'rescheduled',
        runtime: runtime(),
      });
    }
    const children: ChildTuple[] = [];
    try {
      if (msg.callbacks && msg.callbacks.length > 0) {
        for (const id of await publisher.applyCallbacks(msg.callbacks, [value], msg)) children.push(childTuple(id));
      }
      const next = msg.chain?.[msg.chain.length - 1];
      if (msg.chain && next) {
        children.push(childTuple(await publisher.applySignature(next, [value], msg, { chain: msg.chain.slice(0, -1) })));
      }
    } catch (err) {
      log.error(`could not send the callbacks or next chain step of ${msg.task}[${msg.id}]`, { error: coerceError(err).message });
    }
    if (!ignoreResult) await store('SUCCESS', value, null, children);
    const rt = runtime();
    events.succeeded(msg, value, rt);
    if (log.isLevelEnabled('info')) {
      log.info(`Task ${msg.task}[${msg.id}] succeeded in ${rt.toFixed(6)}s: ${truncate(pyRepr(value), 200)}`, { outcome: 'success', runtime: rt });
    }
    return { outcome: { kind: 'succeeded' }, reason: '' };
  }

  async function failedWith(err: Error, timedOut: boolean): Promise<{ outcome: Outcome; reason: string }> {
    const rt = runtime();
    const outcome = classify(err, timedOut);
    switch (outcome.kind) {
      case 'retried':
        return retried(err as RetryTaskError, rt);
      case 'retry-unpublishable':
        log.error(err.message, { outcome: 'reject' });
        return { outcome, reason: err.message };
      case 'rejected':
        log.info(`Task ${msg.task}[${msg.id}] rejected (requeue=${outcome.requeue}): ${err.message}`, { outcome: 'reject', runtime: rt });
        return { outcome, reason: err.message };
      case 'revoked':
        await store('REVOKED', exceptionInfo(err), null, null);
        events.revoked(msg.id, { expired: false, terminated: true, signum: 'SIGTERM' });
        log.warn(`Task ${msg.task}[${msg.id}] terminated by revoke`, { outcome: 'revoked', runtime: rt });
        return { outcome, reason: err.message };
      case 'ignored':
        log.info(`Task ${msg.task}[${msg.id}] ignored`, { outcome: 'ignored', runtime: rt });
        return { outcome, reason: err.message };
      case 'failed':
      case 'timed-out':
        return failure(err, outcome, rt);
    }
  }

  async function retried(r: RetryTaskError, rt: number): Promise<{ outcome: Outcome; reason: string }> {
    const tb = tracebackOf(r.exc ?? r);
    await store('RETRY', exceptionInfo(r.exc ?? r), tb, [childTuple(msg.id)]);
    events.retried(msg, r.exc ?? r, tb);
    log.info(`Task ${msg.task}[${msg.id}] retry: ${r.message}`, { outcome: 'retry', runtime: rt, countdown: r.countdownSeconds });
    return { outcome: { kind: 'retried' }, reason: r.message };
  }

  async function failure(err: Error, outcome: Outcome, rt: number): Promise<{ outcome: Outcome; reason: string }> {
    const timedOut = outcome.kind === 'timed-out';
    const tb = tracebackOf(err);
    const info = exceptionInfo(err);
    await store('FAILURE', info, tb, null);
    await failChain(err, tb);
    await sendErrbacks();
    events.failed(msg, err, tb);
    log.error(`Task ${msg.task}[${msg.id}] raised unexpected: ${info.exc_type}(${info.exc_message.map((m) => pyRepr(m)).join(', ')})`, {
      outcome: timedOut ? 'timeout' : 'failure',
      runtime: rt,
      error: err.stack,
      ...(timedOut ? { abandoned: true } : {}),
    });
    return { outcome, reason: `${info.exc_type}: ${err.message}` };
  }

  /** Celery marks every remaining chain step that has a frozen task id as failed too, so waiters resolve. */
  async function failChain(err: Error, tb: string): Promise<void> {
    for (const step of msg.chain ?? []) {
      const id = step.options.task_id;
      if (typeof id !== 'string' || ignoreResult) continue;
      try {
        await backend.store(
          { taskId: id, state: 'FAILURE', result: exceptionInfo(err), traceback: tb, children: null },
          { replyTo: typeof step.options.reply_to === 'string' ? step.options.reply_to : msg.replyTo, correlationId: id },
        );
      } catch (e) {
        log.error(`could not mark chain step ${id} failed`, { error: coerceError(e).message });
      }
    }
  }

  /** Errbacks are sent as one group with the failed task's id as their argument (Celery's old-style errbacks). */
  async function sendErrbacks(): Promise<void> {
    if (!msg.errbacks || msg.errbacks.length === 0) return;
    try {
      const group = crypto.randomUUID();
      for (const [i, eb] of msg.errbacks.entries()) {
        await publisher.applySignature(eb, [msg.id], msg, { group, groupIndex: i });
      }
    } catch (e) {
      log.error(`could not send the errbacks of ${msg.task}[${msg.id}]`, { error: coerceError(e).message });
    }
  }
}
