/**
 * Tasks are typed definitions: a Celery name, the queue they belong to, a schema for their parameters
 * (Celery positional args are mapped onto named parameters by `argNames`), and the Celery options that
 * change how the worker treats them. The payload is `unknown` until the schema accepts it.
 */
import * as z from 'zod';
import { TaskDefinitionError } from '../errors.js';
import type { TaskContext } from './context.js';

export interface RetryPolicy {
  /** Which errors are retried automatically (Celery `autoretry_for`); 'all' = `(Exception,)`. */
  autoretryFor?: 'all' | ((err: Error) => boolean);
  /** Celery `max_retries`: default 3; null retries forever. */
  maxRetries?: number | null;
  /** Celery `retry_backoff`: true = factor 1; a number is the factor in seconds; false = `defaultRetryDelay`. */
  retryBackoff?: boolean | number;
  /** Celery `retry_backoff_max`, seconds (default 600). */
  retryBackoffMax?: number;
  /** Celery `retry_jitter` (default true): full jitter, `randrange(countdown + 1)`. */
  retryJitter?: boolean;
  /** Celery `default_retry_delay`, seconds (default 180). */
  defaultRetryDelay?: number;
}

export interface TaskOptions {
  /** Celery `acks_late`: ack after the task ends rather than when it starts. */
  acksLate?: boolean;
  /** Celery `acks_on_failure_or_timeout` (default true). */
  acksOnFailureOrTimeout?: boolean;
  ignoreResult?: boolean;
  trackStarted?: boolean;
  /** Hard limit in seconds: the run is abandoned and fails with TimeLimitExceeded. */
  timeLimit?: number;
  /** Soft limit in seconds: the task's AbortSignal fires with SoftTimeLimitExceeded. */
  softTimeLimit?: number;
  /** Celery `rate_limit`: "N/s", "N/m" or "N/h", per worker. */
  rateLimit?: string;
  retry?: RetryPolicy;
  /**
   * For tasks that write a record a user depends on (a charge, a history row): when the task fails for good
   * (its retries exhausted), it is stored FAILURE as Celery does and its message is also copied, confirmed,
   * to the dead-letter queue with the reason, so an operator can replay it once the cause (a database
   * outage) is gone. Celery would only keep the FAILURE, and the record would be lost.
   */
  deadLetterOnExhaustion?: boolean;
  /** For tasks that wait on the outside world by rescheduling themselves with `ctx.checkAgain` (ADR-030). */
  checks?: CheckPolicy;
}

export interface CheckPolicy {
  /** Runs allowed in all, the first included; `checkAgain` gives up when the next would exceed it. */
  maxAttempts: number;
  /** Keyword argument that carries the attempt number (default `attempt`, starting at 0 when absent). */
  attemptParam?: string;
  /** Keyword argument that carries the first run's task id, filled in on the first reschedule. */
  firstRunIdParam?: string;
  /**
   * Send the next run's arguments positionally, in `argNames` order, as a producer that calls
   * `apply_async((id, attempt + 1), …)` does (Smarter's llmhost tasks), instead of as keyword arguments.
   */
  positional?: boolean;
}

export interface TaskDefinition<P = unknown, R = unknown, D = unknown, I = unknown> extends TaskOptions {
  name: string;
  /**
   * The queue this task belongs to; a task arriving elsewhere still runs but is logged as misrouted.
   * `ANY_QUEUE` is for Celery's built-in tasks, which producers send wherever they route them.
   */
  queue: string;
  params: z.ZodType<P, I>;
  /** Order of positional arguments; defaults to the keys of an object schema. */
  argNames?: readonly string[];
  /** Accept any number of positional args as `args` (Python `*args`) instead of mapping them by name. */
  varArgs?: boolean;
  run(params: P, ctx: TaskContext<D>): Promise<R> | R;
}

/** Any task definition, with parameter and result types erased for the registry. */
export interface AnyTask<D = unknown> extends TaskOptions {
  name: string;
  queue: string;
  params: z.ZodType<unknown>;
  argNames: readonly string[];
  varArgs: boolean;
  run(params: unknown, ctx: TaskContext<D>): unknown;
}

/** Carries a task's parameter types on its definition, for typed references; never set at run time. */
declare const PARAMS: unique symbol;

/**
 * A defined task: what the registry holds, plus its parameter types, so that `ctx.applyAsync(task, [],
 * kwargs)` to it is checked by the compiler. `P` is what the task receives, `I` what a caller passes (the
 * schema's input, inferred when `defineTask`'s types are; unknown when `P` is given by hand).
 */
export interface Task<P = unknown, D = unknown, I = unknown> extends AnyTask<D> {
  readonly [PARAMS]?: { params: P; input: I };
}

/**
 * The keyword arguments a caller passes: the schema's input; for a task whose parameter type was written
 * by hand, its parameters, each optional (a default may fill it), names and types still checked.
 */
export type KwargsOf<P, I> = unknown extends I ? Partial<P> : I;

export const ANY_QUEUE = '*';

const NAME_RE = /^[A-Za-z_][\w.:-]*$/;

export function defineTask<P, R, D = unknown, I = unknown>(def: TaskDefinition<P, R, D, I>): Task<P, D, I> {
  if (!NAME_RE.test(def.name)) throw new TaskDefinitionError(def.name, 'name must be a dotted identifier');
  if (!def.queue) throw new TaskDefinitionError(def.name, 'a task must declare its queue');
  if (def.timeLimit !== undefined && def.softTimeLimit !== undefined && def.softTimeLimit > def.timeLimit) {
    throw new TaskDefinitionError(def.name, 'softTimeLimit must not exceed timeLimit');
  }
  const maxRetries = def.retry?.maxRetries;
  if (maxRetries !== undefined && maxRetries !== null && (!Number.isInteger(maxRetries) || maxRetries < 0)) {
    throw new TaskDefinitionError(def.name, 'retry.maxRetries must be a non-negative integer or null');
  }
  const shape = def.params instanceof z.ZodObject ? Object.keys(def.params.shape) : [];
  const argNames = def.argNames ?? shape;
  for (const n of argNames) {
    if (shape.length > 0 && !shape.includes(n)) {
      throw new TaskDefinitionError(def.name, `argNames names ${JSON.stringify(n)}, which the schema lacks`);
    }
  }
  return {
    ...def,
    argNames,
    varArgs: def.varArgs ?? false,
    params: def.params,
    run: (params, ctx) => def.run(params as P, ctx),
  };
}
