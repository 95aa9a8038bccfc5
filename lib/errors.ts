/**
 * Typed errors. Every error the worker raises or classifies has a stable `code` and `name`, so that callers
 * classify by `code` (which survives Jest's module registry and duplicate module copies) rather than `instanceof`.
 *
 * Task outcomes that Python clients re-raise carry the Python exception identity (`pyType`, `pyModule`,
 * `pyArgs`): that is what Celery stores as `exc_type`, `exc_module` and `exc_message`.
 */
export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'PROTOCOL_DECODE'
  | 'PROTOCOL_CONTENT_DISALLOWED'
  | 'PROTOCOL_INVALID'
  | 'PROTOCOL_UNKNOWN_MESSAGE'
  | 'TASK_NOT_REGISTERED'
  | 'TASK_ALREADY_REGISTERED'
  | 'TASK_DEFINITION_INVALID'
  | 'TASK_ARGUMENTS_INVALID'
  | 'TASK_RETRY'
  | 'TASK_REJECT'
  | 'TASK_RETRY_UNPUBLISHABLE'
  | 'TASK_IGNORE'
  | 'TASK_MAX_RETRIES'
  | 'TASK_SOFT_TIME_LIMIT'
  | 'TASK_TIME_LIMIT'
  | 'TASK_REVOKED'
  | 'TASK_GAVE_UP'
  | 'TASK_FAILED'
  | 'BROKER'
  | 'BROKER_UNROUTABLE'
  | 'WORKER_STATE'
  | 'BACKEND';

export interface PyExceptionIdentity {
  /** Python class name (`exc_type`). */
  readonly pyType: string;
  /** Python module (`exc_module`); null makes Python synthesise a class of that name. */
  readonly pyModule: string | null;
  /** Python exception args (`exc_message`). */
  readonly pyArgs: readonly unknown[];
}

export class WorkerError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

export function hasCode(err: unknown, code: ErrorCode): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

/**
 * A task failure that Python clients re-raise as a given Python class: `new PythonException('ValueError',
 * 'builtins', 'bad domain')` makes `AsyncResult.get()` raise `ValueError('bad domain')`. A null module makes
 * Python synthesise a class of that name.
 */
export class PythonException extends WorkerError implements PyExceptionIdentity {
  readonly pyArgs: readonly unknown[];
  constructor(
    readonly pyType: string,
    readonly pyModule: string | null,
    message: string,
  ) {
    super('TASK_FAILED', message);
    this.pyArgs = [message];
  }
}

export class ConfigError extends WorkerError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super('CONFIG_INVALID', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}

/** A message the worker cannot turn into a task. `where` names the part of the message at fault. */
export class ProtocolError extends WorkerError {
  readonly where: string;
  constructor(
    code: 'PROTOCOL_DECODE' | 'PROTOCOL_CONTENT_DISALLOWED' | 'PROTOCOL_INVALID' | 'PROTOCOL_UNKNOWN_MESSAGE',
    where: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, `${where}: ${message}`, options);
    this.where = where;
  }
}

/** Celery's `NotRegistered`: the task name is not in this worker's registry. */
export class NotRegisteredError extends WorkerError implements PyExceptionIdentity {
  readonly pyType = 'NotRegistered';
  readonly pyModule = 'celery.exceptions';
  readonly pyArgs: readonly unknown[];
  constructor(readonly taskName: string) {
    super('TASK_NOT_REGISTERED', `task ${JSON.stringify(taskName)} is not registered`);
    this.pyArgs = [taskName];
  }
}

export class AlreadyRegisteredError extends WorkerError {
  constructor(taskName: string) {
    super('TASK_ALREADY_REGISTERED', `task ${JSON.stringify(taskName)} is registered twice`);
  }
}

export class TaskDefinitionError extends WorkerError {
  constructor(taskName: string, problem: string) {
    super('TASK_DEFINITION_INVALID', `task ${JSON.stringify(taskName)}: ${problem}`);
  }
}

/**
 * The message's arguments do not fit the task's parameters. Python raises `TypeError` for a bad call
 * signature; Python clients get the same class. Never retried: the same arguments fail the same way.
 */
export class TaskArgumentsError extends WorkerError implements PyExceptionIdentity {
  readonly pyType = 'TypeError';
  readonly pyModule = 'builtins';
  readonly pyArgs: readonly unknown[];
  constructor(taskName: string, problems: readonly string[]) {
    super('TASK_ARGUMENTS_INVALID', `${taskName}: invalid arguments: ${problems.join('; ')}`);
    this.pyArgs = [this.message];
  }
}

/** Thrown by `ctx.retry()`; the worker has already published the retry message when it sees this. */
export class RetryTaskError extends WorkerError implements PyExceptionIdentity {
  readonly pyType = 'Retry';
  readonly pyModule = 'celery.exceptions';
  readonly pyArgs: readonly unknown[];
  constructor(
    message: string,
    readonly exc: unknown,
    readonly countdownSeconds: number,
  ) {
    super('TASK_RETRY', message);
    this.pyArgs = [message];
  }
}

/** Celery's `Reject`: the message is rejected, requeued or not. */
export class RejectTaskError extends WorkerError {
  constructor(
    reason: string,
    readonly requeue: boolean,
  ) {
    super('TASK_REJECT', reason);
  }
}

/**
 * A retry whose message could not be published: Celery raises Reject(requeue=False). Its own code, so that
 * classifying it never depends on which class it extends.
 */
export class RetryUnpublishableError extends WorkerError {
  readonly requeue = false;
  constructor(reason: string, options?: { cause?: unknown }) {
    super('TASK_RETRY_UNPUBLISHABLE', reason, options);
  }
}

/** A worker asked to change state in a way its life does not allow (start twice, start after it stopped). */
export class WorkerStateError extends WorkerError {
  constructor(message: string) {
    super('WORKER_STATE', message);
  }
}

/** Celery's `Ignore`: ack the message, store no state. */
export class IgnoreTaskError extends WorkerError {
  constructor(reason = 'ignored') {
    super('TASK_IGNORE', reason);
  }
}

export class MaxRetriesExceededError extends WorkerError implements PyExceptionIdentity {
  readonly pyType = 'MaxRetriesExceededError';
  readonly pyModule = 'celery.exceptions';
  readonly pyArgs: readonly unknown[];
  constructor(message: string) {
    super('TASK_MAX_RETRIES', message);
    this.pyArgs = [message];
  }
}

export class SoftTimeLimitExceededError extends WorkerError implements PyExceptionIdentity {
  readonly pyType = 'SoftTimeLimitExceeded';
  readonly pyModule = 'billiard.exceptions';
  readonly pyArgs: readonly unknown[] = [];
  constructor(seconds: number) {
    super('TASK_SOFT_TIME_LIMIT', `soft time limit (${seconds}s) exceeded`);
  }
}

export class TimeLimitExceededError extends WorkerError implements PyExceptionIdentity {
  readonly pyType = 'TimeLimitExceeded';
  readonly pyModule = 'billiard.exceptions';
  readonly pyArgs: readonly unknown[];
  constructor(readonly seconds: number) {
    super('TASK_TIME_LIMIT', `hard time limit (${seconds}s) exceeded`);
    // Python stores the limit as a float: 300 → 300.0 is the same JSON number.
    this.pyArgs = [seconds];
  }
}

export class TaskRevokedError extends WorkerError implements PyExceptionIdentity {
  readonly pyType = 'TaskRevokedError';
  readonly pyModule = 'celery.exceptions';
  readonly pyArgs: readonly unknown[];
  constructor(readonly reason: 'revoked' | 'expired' | 'terminated') {
    super('TASK_REVOKED', reason);
    this.pyArgs = [reason];
  }
}

/**
 * A check-and-reschedule task used up its attempts (ADR-030): the outside world never became ready.
 * Tasks catch it to record the failure (Smarter marks the resource Failed); uncaught, the run fails with it.
 */
export class GaveUpError extends WorkerError implements PyExceptionIdentity {
  readonly pyType = 'GaveUp';
  readonly pyModule = null;
  readonly pyArgs: readonly unknown[];
  constructor(
    readonly taskName: string,
    readonly attempts: number,
  ) {
    super('TASK_GAVE_UP', `${taskName} gave up after ${attempts} attempts`);
    this.pyArgs = [this.message];
  }
}

export function isGaveUp(err: unknown): err is GaveUpError {
  return hasCode(err, 'TASK_GAVE_UP');
}

export class BrokerError extends WorkerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('BROKER', message, options);
  }
}

/**
 * The broker confirmed a message that no queue took (its queue, or a delay level on its way, was deleted): it
 * is gone, so it never counts as sent.
 */
export class UnroutableError extends WorkerError {
  constructor(
    readonly exchange: string,
    readonly routingKey: string,
    reason: string,
  ) {
    super(
      'BROKER_UNROUTABLE',
      `no queue took the message published to ${exchange ? `exchange ${exchange}` : 'the default exchange'} with routing key ${routingKey} (${reason})`,
    );
  }
}

export class BackendError extends WorkerError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('BACKEND', message, options);
  }
}

/** Turns whatever was thrown into an Error, so that every catch site handles one type. */
export function coerceError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === 'string') return new Error(thrown);
  try {
    return new Error(`non-Error thrown: ${JSON.stringify(thrown)}`);
  } catch {
    return new Error(`non-Error thrown: ${String(thrown)}`);
  }
}

const PY_BUILTIN_FOR_JS: Record<string, string> = {
  Error: 'Exception',
  TypeError: 'TypeError',
  RangeError: 'ValueError',
  SyntaxError: 'ValueError',
  ReferenceError: 'NameError',
  EvalError: 'RuntimeError',
  URIError: 'ValueError',
  AggregateError: 'Exception',
  AbortError: 'Exception',
};

function isPyIdentity(err: unknown): err is PyExceptionIdentity {
  return typeof err === 'object' && err !== null && typeof (err as { pyType?: unknown }).pyType === 'string';
}

/**
 * The Python identity of any error: errors that declare one keep it; JS built-ins map to the nearest Python
 * builtin (so `isinstance` works on the Python side); other named errors become a class Python synthesises
 * with the same name (`exc_module` null).
 */
export function pyIdentityOf(err: Error): PyExceptionIdentity {
  if (isPyIdentity(err)) return err;
  const builtin = PY_BUILTIN_FOR_JS[err.name];
  if (builtin !== undefined) return { pyType: builtin, pyModule: 'builtins', pyArgs: [err.message] };
  return { pyType: err.name || 'Exception', pyModule: null, pyArgs: [err.message] };
}
