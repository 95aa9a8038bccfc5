/**
 * Celery's retry arithmetic and retry message, kept pure so they can be checked against Celery's numbers.
 */
import type { RetryPolicy } from '../../registry/define-task.js';
import type { OutgoingTask } from '../../protocol/encode.js';
import type { TaskMessage } from '../../protocol/types.js';
import { PyDateTime } from '../../protocol/values.js';

export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_RETRY_DELAY = 180;
export const DEFAULT_BACKOFF_MAX = 600;

/** Python's `random.randrange(n)`: an integer in [0, n). */
export type RandRange = (n: number) => number;
export const randrange: RandRange = (n) => Math.floor(Math.random() * n);

/**
 * Celery `get_exponential_backoff_interval(factor, retries, maximum, full_jitter)`:
 * `min(maximum, factor * 2**retries)`, then with full jitter `randrange(countdown + 1)`, never negative.
 */
export function exponentialBackoff(
  factor: number,
  retries: number,
  maximum: number,
  fullJitter: boolean,
  rand: RandRange = randrange,
): number {
  let countdown = Math.min(maximum, factor * 2 ** retries);
  if (fullJitter) countdown = rand(countdown + 1);
  return Math.max(0, countdown);
}

/** The countdown autoretry uses for the given (current, pre-increment) retry count, in seconds. */
export function autoretryCountdown(policy: RetryPolicy, retries: number, rand: RandRange = randrange): number {
  const backoff = policy.retryBackoff ?? false;
  if (backoff === false || backoff === 0) return policy.defaultRetryDelay ?? DEFAULT_RETRY_DELAY;
  // Celery: `int(max(1.0, retry_backoff))`, so True (== 1) and anything below 1 mean a factor of 1.
  const factor = Math.trunc(Math.max(1, backoff === true ? 1 : backoff));
  return exponentialBackoff(
    factor,
    retries,
    policy.retryBackoffMax ?? DEFAULT_BACKOFF_MAX,
    policy.retryJitter ?? true,
    rand,
  );
}

export function shouldAutoretry(policy: RetryPolicy | undefined, err: Error): boolean {
  const f = policy?.autoretryFor;
  if (f === undefined) return false;
  return f === 'all' ? true : f(err);
}

const X_DEATH = /^x-(death|first-death-|last-death-)/;

/**
 * The retry message (Celery `Task.retry` → `signature_from_request`): same id and links, `retries + 1`,
 * a new eta; the parent becomes the task itself when it had none (golden 5); `x-death` headers are dropped.
 */
export function buildRetryMessage(
  msg: TaskMessage,
  opts: { etaMs: number; args?: unknown[]; kwargs?: Record<string, unknown> },
): OutgoingTask {
  const customHeaders: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(msg.customHeaders)) if (!X_DEATH.test(k)) customHeaders[k] = v;
  return {
    id: msg.id,
    task: msg.task,
    args: opts.args ?? msg.args,
    kwargs: opts.kwargs ?? msg.kwargs,
    retries: msg.retries + 1,
    eta: PyDateTime.fromEpochMs(opts.etaMs),
    expires: msg.expires,
    timelimit: msg.timelimit,
    rootId: msg.rootId ?? msg.id,
    parentId: msg.parentId ?? msg.id,
    group: msg.group,
    groupIndex: msg.groupIndex,
    shadow: msg.shadow,
    origin: msg.origin,
    ignoreResult: msg.ignoreResult,
    replacedTaskNesting: msg.replacedTaskNesting,
    stampedHeaders: msg.stampedHeaders,
    stamps: msg.stamps,
    customHeaders,
    callbacks: msg.callbacks,
    errbacks: msg.errbacks,
    chain: msg.chain,
    chord: msg.chord,
    replyTo: msg.replyTo,
    priority: msg.priority,
  };
}
