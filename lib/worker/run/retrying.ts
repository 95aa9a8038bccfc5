/**
 * Retrying a run, in one place: the decision (Celery's `autoretry_for`: whether a run's error is retried, and
 * after how long) and the publication (Celery's `Task.retry`: the same message again, confirmed, then the
 * `Retry` that ends the run). A task's own `ctx.retry()` and the worker's autoretry both publish here; the
 * arithmetic is in retry.ts, the outcome of the `Retry` in after-run.ts.
 */
import type { Delivery } from '../../broker/broker.js';
import { MaxRetriesExceededError, RetryTaskError, RetryUnpublishableError, coerceError } from '../../errors.js';
import { pyRepr } from '../../protocol/repr.js';
import type { TaskMessage } from '../../protocol/types.js';
import type { RetryOptions } from '../../registry/context.js';
import type { AnyTask } from '../../registry/define-task.js';
import { autoretryable } from './classify.js';
import type { TaskPublisher } from '../publisher.js';
import {
  DEFAULT_MAX_RETRIES,
  DEFAULT_RETRY_DELAY,
  autoretryCountdown,
  buildRetryMessage,
  shouldAutoretry,
} from './retry.js';

export interface RetryInput {
  msg: TaskMessage;
  task: Pick<AnyTask<unknown>, 'retry'>;
  /** `settled`: acked already (early ack), so a retry the broker refuses is held, not thrown (publish-hold.ts). */
  delivery: Pick<Delivery, 'exchange' | 'routingKey'> & Partial<Pick<Delivery, 'settled'>>;
  publisher: Pick<TaskPublisher, 'send'>;
  now?: () => number;
}

/**
 * Celery `autoretry_for`: the countdown of the retry this error earns, or null when it earns none: an error
 * outside the task's `autoretry_for`, bad arguments (they fail the same way every time), or a run abandoned at
 * its hard time limit.
 */
export function autoretryCountdownFor(
  task: Pick<AnyTask<unknown>, 'retry'>,
  msg: Pick<TaskMessage, 'retries'>,
  error: Error,
  abandoned: boolean,
): number | null {
  if (!autoretryable(error) || abandoned || !shouldAutoretry(task.retry, error)) return null;
  return autoretryCountdown(task.retry ?? {}, msg.retries);
}

/**
 * Celery `self.retry()`: the same message again (same id, retries + 1) to the queue or exchange it came
 * from, confirmed; then a `RetryTaskError` ends the run. Past `maxRetries` the cause (or
 * MaxRetriesExceededError) is thrown instead; a retry that cannot be published is RetryUnpublishableError,
 * unless the message was acked already (early ack): the retry is then held and sent again until the broker
 * takes it, since nothing else would bring the task back.
 */
export async function retryTask(input: RetryInput, o: RetryOptions = {}): Promise<never> {
  const { msg, task, delivery, publisher } = input;
  const now = input.now ?? Date.now;
  const max = o.maxRetries !== undefined ? o.maxRetries : (task.retry?.maxRetries ?? DEFAULT_MAX_RETRIES);
  if (max !== null && msg.retries + 1 > max) {
    if (o.exc !== undefined) throw coerceError(o.exc);
    throw new MaxRetriesExceededError(
      `Can't retry ${msg.task}[${msg.id}] args:${msg.argsrepr} kwargs:${msg.kwargsrepr}`,
    );
  }
  const countdown = o.eta
    ? Math.max(0, (o.eta.getTime() - now()) / 1000)
    : (o.countdown ?? task.retry?.defaultRetryDelay ?? DEFAULT_RETRY_DELAY);
  const next = buildRetryMessage(msg, { etaMs: now() + countdown * 1000, args: o.args, kwargs: o.kwargs });
  const route =
    delivery.exchange === ''
      ? { queue: delivery.routingKey }
      : { exchange: delivery.exchange, routingKey: delivery.routingKey };
  try {
    await publisher.send(next, route, delivery.settled === true ? { what: 'retry' } : undefined);
  } catch (err) {
    throw new RetryUnpublishableError(
      `retry of ${msg.task}[${msg.id}] could not be published: ${coerceError(err).message}`,
      { cause: err },
    );
  }
  const excText = o.exc !== undefined ? pyRepr(coerceError(o.exc).message) : '';
  throw new RetryTaskError(`Retry in ${countdown}s${excText ? `: ${excText}` : ''}`, o.exc, countdown);
}
