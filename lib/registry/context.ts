/** What a running task sees: its identity, a logger bound to it, an AbortSignal, and ways to schedule work. */
import type { Logger } from '../logger.js';
import type { PyDateTime } from '../protocol/values.js';
import type { Signature } from '../protocol/types.js';
import type { KwargsOf, Task } from './define-task.js';

export interface ApplyOptions {
  taskId?: string;
  /** Seconds from now. */
  countdown?: number;
  eta?: Date;
  /** Seconds from now, or an instant. */
  expires?: number | Date;
  /** Defaults to the task's declared queue when registered here, else the worker's default queue. */
  queue?: string;
  priority?: number;
  headers?: Record<string, unknown>;
  timeLimit?: number;
  softTimeLimit?: number;
  link?: Signature[];
  linkError?: Signature[];
  replyTo?: string;
}

export interface RetryOptions {
  /** Seconds; default: the task's `defaultRetryDelay` (180). */
  countdown?: number;
  eta?: Date;
  /** The error that caused the retry: stored as the RETRY result, re-thrown when retries are exhausted. */
  exc?: unknown;
  maxRetries?: number | null;
  args?: unknown[];
  kwargs?: Record<string, unknown>;
}

export interface TaskContext<D = unknown> {
  readonly id: string;
  readonly name: string;
  /** The queue the message was consumed from. */
  readonly queue: string;
  readonly retries: number;
  readonly rootId: string;
  readonly parentId: string | null;
  readonly group: string | null;
  readonly eta: PyDateTime | null;
  readonly expires: PyDateTime | null;
  readonly replyTo: string | null;
  readonly redelivered: boolean;
  /** This worker's node name (`celery@host`). */
  readonly hostname: string;
  /** Custom message headers (Celery `request.headers`). */
  readonly headers: Readonly<Record<string, unknown>>;
  readonly logger: Logger;
  /** Aborted at the soft time limit, on revoke with terminate, and on cold shutdown; `reason` says which. */
  readonly signal: AbortSignal;
  /** Clients built once at start-up (database, cloud), injected so tests can hand in their own. */
  readonly deps: D;
  /** Celery `self.retry()`: publishes the retry (same id, retries + 1), then rejects with the Retry outcome. */
  retry(options?: RetryOptions): Promise<never>;
  /**
   * Celery `send_task`/`apply_async`; resolves with the task id once the broker confirmed the message.
   * Given a task's definition, its keyword arguments are checked against its schema and it goes to the
   * task's declared queue unless `options.queue` says otherwise; a name is for tasks defined elsewhere.
   */
  applyAsync<P, I>(task: Task<P, never, I>, args: [], kwargs: KwargsOf<P, I>, options?: ApplyOptions): Promise<string>;
  applyAsync(task: string, args?: unknown[], kwargs?: Record<string, unknown>, options?: ApplyOptions): Promise<string>;
  /** Applies a Celery signature (canvas), with `partialArgs` prepended unless it is immutable. */
  applySignature(sig: Signature, partialArgs?: unknown[]): Promise<string>;
  /**
   * Never wait (ADR-030): "not ready, check again in `after` seconds". Sends this task again (same name,
   * its declared queue, the same arguments with `attempt + 1` and any `update`) through the broker's delay
   * topology, and ends this run as successful-and-rescheduled: `return ctx.checkAgain({ after: 60 })`.
   * Throws `GaveUpError` when the task's `checks.maxAttempts` (or this call's `maxAttempts`) would be exceeded.
   */
  checkAgain(options: CheckAgainOptions): Promise<Rescheduled>;
  /** The stored result meta of another task, where the result backend can be read (redis). */
  getResult(taskId: string): Promise<Record<string, unknown> | null>;
  /**
   * Says what this run waits on now when other runs wait on it too (a group commit's batch), or null once it
   * waits on nothing shared: runs past their wait budget while waiting on the same thing are reported in one
   * line, not one each.
   */
  waitingOn(what: string | null): void;
}

export interface CheckAgainOptions {
  /** Seconds until the next check. */
  after: number;
  /** Arguments that change for the next run. */
  update?: Record<string, unknown>;
  /**
   * The attempt this run counts as, when not its own attempt argument: a task whose stages count their checks
   * separately passes 0 in the run where a new stage begins.
   */
  attempt?: number;
  /** The limit of this stage, or one that arrives as an argument, in place of `checks.maxAttempts`. */
  maxAttempts?: number;
}

/** What a run that rescheduled itself returns; the worker stores it as a plain SUCCESS (None), as Python would. */
export class Rescheduled {
  readonly rescheduled = true;
  constructor(
    readonly nextId: string,
    readonly attempt: number,
    readonly afterSeconds: number,
  ) {}
}
