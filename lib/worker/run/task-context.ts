/**
 * The task context: what a running task sees (`TaskContext`) and the ways it schedules work, built from
 * the message, the task and the publisher alone, so each can be tested without a broker or a worker:
 * `retry` (Celery's `self.retry()`), `checkAgain` (never wait, ADR-030) and `applyAsync`.
 */
import type { ResultBackend } from '../../backend/backend.js';
import type { Delivery } from '../../broker/broker.js';
import type { Logger } from '../../logger.js';
import type { TaskMessage } from '../../protocol/types.js';
import { planCheckAgain } from '../../registry/checks.js';
import { type ApplyOptions, type CheckAgainOptions, Rescheduled, type TaskContext } from '../../registry/context.js';
import { ANY_QUEUE, type AnyTask } from '../../registry/define-task.js';
import type { TaskPublisher } from '../publisher.js';
import { retryTask } from './retrying.js';

export type ContextPublisher = Pick<TaskPublisher, 'send' | 'apply' | 'applySignature'>;

export interface ContextInput<D> {
  msg: TaskMessage;
  task: Pick<AnyTask<unknown>, 'queue' | 'retry' | 'checks'> & { argNames?: readonly string[] };
  /** `settled`: acked already (early ack): a retry or check-again the broker refuses is held (publish-hold.ts). */
  delivery: Pick<Delivery, 'queue' | 'exchange' | 'routingKey' | 'redelivered'> & Partial<Pick<Delivery, 'settled'>>;
  publisher: ContextPublisher;
  backend: Pick<ResultBackend, 'get'>;
  nodeName: string;
  deps: D;
  logger: Logger;
  /** Told what the run waits on with other runs (`ctx.waitingOn`), for the wait-budget report. */
  waitingOn?: (what: string | null) => void;
  /** Holds the run's signal, read only when the task reads `ctx.signal` (an AbortController will do). */
  control: { readonly signal: AbortSignal };
  now?: () => number;
}

/** Never wait: this task again, with `attempt + 1`, after `options.after` seconds, through the broker. */
export async function checkTaskAgain(
  input: Pick<ContextInput<unknown>, 'msg' | 'task' | 'delivery' | 'publisher'>,
  bound: unknown,
  options: CheckAgainOptions,
): Promise<Rescheduled> {
  const { msg, task, delivery, publisher } = input;
  const { args, kwargs, attempt } = planCheckAgain(msg.task, task.checks, bound, options, msg.id, task.argNames);
  const queue = task.queue === ANY_QUEUE ? delivery.queue : task.queue;
  const hold = delivery.settled === true ? { what: 'check-again countdown' } : undefined;
  const id = await publisher.apply(msg.task, args, kwargs, { countdown: options.after, queue }, msg, hold);
  return new Rescheduled(id, attempt, options.after);
}

/** Sends a task by name, or by its definition (to its declared queue unless `options.queue` is given). */
function applyTo(
  publisher: ContextPublisher,
  parent: TaskMessage,
  target: string | AnyTask<never>,
  args: unknown[],
  kwargs: Record<string, unknown>,
  options: ApplyOptions,
): Promise<string> {
  if (typeof target === 'string') return publisher.apply(target, args, kwargs, options, parent);
  const queue = options.queue ?? (target.queue === ANY_QUEUE ? undefined : target.queue);
  return publisher.apply(target.name, args, kwargs, queue === undefined ? options : { ...options, queue }, parent);
}

/**
 * A context's `signal`, read through to the run's control on first use, from the prototype: a getter in
 * the context's object literal made every context a slow object (the drain measured ~40 % more CPU).
 */
class LazySignal {
  readonly #control: { readonly signal: AbortSignal };
  constructor(control: { readonly signal: AbortSignal }) {
    this.#control = control;
  }
  get signal(): AbortSignal {
    return this.#control.signal;
  }
}

/** The context, and `bind` to hand it the validated parameters once they are known (checkAgain reuses them). */
export function createTaskContext<D>(input: ContextInput<D>): { ctx: TaskContext<D>; bind(params: unknown): void } {
  const { msg, delivery, publisher, backend } = input;
  let bound: unknown;
  const fields: Omit<TaskContext<D>, 'signal'> = {
    id: msg.id,
    name: msg.task,
    queue: delivery.queue,
    retries: msg.retries,
    rootId: msg.rootId ?? msg.id,
    parentId: msg.parentId,
    group: msg.group,
    eta: msg.eta,
    expires: msg.expires,
    replyTo: msg.replyTo,
    redelivered: delivery.redelivered,
    hostname: input.nodeName,
    headers: msg.customHeaders,
    logger: input.logger,
    deps: input.deps,
    retry: (o) => retryTask(input, o),
    applyAsync: (
      target: string | AnyTask<never>,
      args: unknown[] = [],
      kwargs: unknown = {},
      options: ApplyOptions = {},
    ) => applyTo(publisher, msg, target, args, kwargs as Record<string, unknown>, options),
    applySignature: (sig, partialArgs = []) => publisher.applySignature(sig, partialArgs, msg),
    getResult: (taskId) => backend.get(taskId),
    checkAgain: (options) => checkTaskAgain(input, bound, options),
    waitingOn: (what) => input.waitingOn?.(what),
  };
  const ctx: TaskContext<D> = Object.assign(new LazySignal(input.control), fields);
  return {
    ctx,
    bind(params: unknown) {
      bound = params;
    },
  };
}
