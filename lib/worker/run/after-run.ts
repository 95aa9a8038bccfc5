/**
 * The after-run steps of a task run, one handler per way a run ends, in Celery's order (celery/app/trace.py's
 * `on_success` and `handle_retry`, `handle_failure`, `handle_reject`, `handle_ignore`): success sends the callbacks
 * and the chain's next step, then stores the result; a retry stores RETRY; a failure stores FAILURE, fails the
 * rest of the chain and sends the errbacks. Each returns the run's outcome; settling the message is the
 * worker's (`decide`).
 *
 * Callbacks, chain steps and errbacks that the broker refuses are held and sent again until it takes them
 * (publish-hold.ts): the message is acked whatever becomes of them (at its start under early ack, at the end of
 * the run under late ack), so no one else would send them.
 */
import type { ResultBackend } from '../../backend/backend.js';
import {
  type ChildTuple,
  type StoredResult,
  type TaskState,
  childTuple,
  exceptionInfo,
  tracebackOf,
} from '../../backend/meta.js';
import { type RetryTaskError, coerceError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { pyRepr, truncate } from '../../protocol/repr.js';
import type { TaskMessage } from '../../protocol/types.js';
import { Rescheduled } from '../../registry/context.js';
import { classify } from './classify.js';
import type { Outcome } from '../settle/decide.js';
import type { TaskEvents } from '../events.js';
import type { TaskPublisher } from '../publisher.js';

export interface RunEnd {
  outcome: Outcome;
  reason: string;
  /** The error a failed run raised (for its trace span). */
  error?: Error;
}

/** What the handlers need of the run. */
export interface Ending {
  msg: TaskMessage;
  log: Logger;
  publisher: TaskPublisher;
  backend: ResultBackend;
  events: TaskEvents;
  /** The task's or the message's `ignore_result`: nothing is stored. */
  ignoreResult: boolean;
  /** Seconds since the run began. */
  runtime: () => number;
  /** Celery's `result_extended` fields, stored with every state of this run; absent when it is off. */
  extended?: StoredResult['extended'];
}

/**
 * Celery's `result_extended` fields of a run (`_get_result_meta`): the task's name, arguments, the worker, the
 * retries and the routing key it came by; Celery 5.3+ adds the stamps, each under its own name.
 */
export function extendedFields(msg: TaskMessage, worker: string, queue: string): NonNullable<StoredResult['extended']> {
  const fields: NonNullable<StoredResult['extended']> = {
    name: msg.task,
    args: msg.args,
    kwargs: msg.kwargs,
    worker,
    retries: msg.retries,
    queue,
  };
  if (msg.stampedHeaders && msg.stampedHeaders.length > 0) {
    fields.stamped_headers = msg.stampedHeaders;
    Object.assign(fields, msg.stamps);
  }
  return fields;
}

/** Stores a state of this task, unless its result is ignored; a backend that cannot store it is logged, never fatal. */
export async function storeResult(
  e: Ending,
  state: TaskState,
  result: unknown,
  traceback: string | null,
  children: ChildTuple[] | null,
): Promise<void> {
  if (e.ignoreResult) return;
  const { msg } = e;
  const r: StoredResult = {
    taskId: msg.id,
    state,
    result,
    traceback,
    children,
    groupId: msg.group,
    parentId: msg.parentId,
    ...(e.extended ? { extended: e.extended } : {}),
  };
  try {
    await e.backend.store(r, { replyTo: msg.replyTo, correlationId: msg.correlationId });
  } catch (err) {
    e.log.error(`could not store ${state} for ${msg.task}[${msg.id}]`, { error: coerceError(err).message });
  }
}

/**
 * The run returned: the callbacks and the chain's next step, then SUCCESS (a rescheduled check returns None).
 * A run with nothing to send on or store ends without a promise of its own.
 */
export function handleSuccess(e: Ending, returned: unknown): Promise<RunEnd> | RunEnd {
  const { msg, log } = e;
  // A rescheduled check ends like Python's `apply_async(...); return None`.
  const value = returned instanceof Rescheduled ? null : returned;
  if (returned instanceof Rescheduled) {
    log.info(
      `Task ${msg.task}[${msg.id}] not ready; check ${returned.attempt} in ${returned.afterSeconds}s as ${returned.nextId}`,
      {
        outcome: 'rescheduled',
        runtime: e.runtime(),
      },
    );
  }
  const sendsOn = (msg.callbacks?.length ?? 0) > 0 || (msg.chain?.length ?? 0) > 0;
  if (!sendsOn && e.ignoreResult) return succeeded(e, value);
  return sendOnAndStore(e, value);
}

async function sendOnAndStore(e: Ending, value: unknown): Promise<RunEnd> {
  const { msg, log } = e;
  const children: ChildTuple[] = [];
  try {
    if (msg.callbacks && msg.callbacks.length > 0) {
      const ids = await e.publisher.applyCallbacks(msg.callbacks, [value], msg, undefined, { what: 'callback' });
      for (const id of ids) children.push(childTuple(id));
    }
    const next = msg.chain?.[msg.chain.length - 1];
    if (msg.chain && next) {
      const id = await e.publisher.applySignature(next, [value], msg, {
        chain: msg.chain.slice(0, -1),
        hold: { what: 'chain step' },
      });
      children.push(childTuple(id));
    }
  } catch (err) {
    log.error(`could not send the callbacks or next chain step of ${msg.task}[${msg.id}]`, {
      error: coerceError(err).message,
    });
  }
  if (!e.ignoreResult) await storeResult(e, 'SUCCESS', value, null, children);
  return succeeded(e, value);
}

function succeeded(e: Ending, value: unknown): RunEnd {
  const { msg, log } = e;
  const rt = e.runtime();
  e.events.succeeded(msg, value, rt);
  if (log.isLevelEnabled('info')) {
    log.info(`Task ${msg.task}[${msg.id}] succeeded in ${rt.toFixed(6)}s: ${truncate(pyRepr(value), 200)}`, {
      outcome: 'success',
      runtime: rt,
    });
  }
  return { outcome: { kind: 'succeeded' }, reason: '' };
}

/** The run raised (its retry, if it earned one, already published): what the error means, then its handler. */
export async function handleError(e: Ending, err: Error, timedOut: boolean): Promise<RunEnd> {
  const { msg, log } = e;
  const rt = e.runtime();
  const outcome = classify(err, timedOut);
  switch (outcome.kind) {
    case 'retried':
      return handleRetry(e, err as RetryTaskError, rt);
    case 'retry-unpublishable':
      log.error(err.message, { outcome: 'reject' });
      return { outcome, reason: err.message };
    case 'rejected':
      log.info(`Task ${msg.task}[${msg.id}] rejected (requeue=${outcome.requeue}): ${err.message}`, {
        outcome: 'reject',
        runtime: rt,
      });
      return { outcome, reason: err.message };
    case 'revoked':
      return handleRevoked(e, err, outcome, rt);
    case 'ignored':
      log.info(`Task ${msg.task}[${msg.id}] ignored`, { outcome: 'ignored', runtime: rt });
      return { outcome, reason: err.message };
    case 'failed':
    case 'timed-out':
      return handleFailure(e, err, outcome, rt);
  }
}

/** The retry was published (retrying.ts): RETRY, with the retry itself as the child. */
export async function handleRetry(e: Ending, r: RetryTaskError, rt: number): Promise<RunEnd> {
  const { msg } = e;
  const tb = tracebackOf(r.exc ?? r);
  await storeResult(e, 'RETRY', exceptionInfo(r.exc ?? r), tb, [childTuple(msg.id)]);
  e.events.retried(msg, r.exc ?? r, tb);
  e.log.info(`Task ${msg.task}[${msg.id}] retry: ${r.message}`, {
    outcome: 'retry',
    runtime: rt,
    countdown: r.countdownSeconds,
  });
  return { outcome: { kind: 'retried' }, reason: r.message };
}

/** A revoke with terminate ended the run: REVOKED. */
async function handleRevoked(e: Ending, err: Error, outcome: Outcome, rt: number): Promise<RunEnd> {
  const { msg } = e;
  await storeResult(e, 'REVOKED', exceptionInfo(err), null, null);
  e.events.revoked(msg.id, { expired: false, terminated: true, signum: 'SIGTERM' });
  e.log.warn(`Task ${msg.task}[${msg.id}] terminated by revoke`, { outcome: 'revoked', runtime: rt });
  return { outcome, reason: err.message };
}

/** A failure (or a run abandoned at its hard time limit): FAILURE, the rest of the chain failed, the errbacks sent. */
export async function handleFailure(e: Ending, err: Error, outcome: Outcome, rt: number): Promise<RunEnd> {
  const { msg } = e;
  const timedOut = outcome.kind === 'timed-out';
  const tb = tracebackOf(err);
  const info = exceptionInfo(err);
  await storeResult(e, 'FAILURE', info, tb, null);
  await failChain(e, err, tb);
  await sendErrbacks(e);
  e.events.failed(msg, err, tb);
  e.log.error(
    `Task ${msg.task}[${msg.id}] raised unexpected: ${info.exc_type}(${info.exc_message.map((m) => pyRepr(m)).join(', ')})`,
    {
      outcome: timedOut ? 'timeout' : 'failure',
      runtime: rt,
      error: err.stack,
      ...(timedOut ? { abandoned: true } : {}),
    },
  );
  return { outcome, reason: `${info.exc_type}: ${err.message}`, error: err };
}

/** Celery marks every remaining chain step that has a frozen task id as failed too, so waiters resolve. */
export async function failChain(e: Ending, err: Error, tb: string): Promise<void> {
  const { msg } = e;
  for (const step of msg.chain ?? []) {
    const id = step.options.task_id;
    if (typeof id !== 'string' || e.ignoreResult) continue;
    try {
      await e.backend.store(
        { taskId: id, state: 'FAILURE', result: exceptionInfo(err), traceback: tb, children: null },
        { replyTo: typeof step.options.reply_to === 'string' ? step.options.reply_to : msg.replyTo, correlationId: id },
      );
    } catch (err2) {
      e.log.error(`could not mark chain step ${id} failed`, { error: coerceError(err2).message });
    }
  }
}

/** Errbacks are sent as one group with the failed task's id as their argument (Celery's old-style errbacks). */
export async function sendErrbacks(e: Ending): Promise<void> {
  const { msg } = e;
  if (!msg.errbacks || msg.errbacks.length === 0) return;
  try {
    const group = crypto.randomUUID();
    for (const [i, eb] of msg.errbacks.entries()) {
      await e.publisher.applySignature(eb, [msg.id], msg, { group, groupIndex: i, hold: { what: 'errback' } });
    }
  } catch (err) {
    e.log.error(`could not send the errbacks of ${msg.task}[${msg.id}]`, { error: coerceError(err).message });
  }
}
