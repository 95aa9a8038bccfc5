/**
 * What a task's error means, decided in one place by its `code` (never by `instanceof`, whose answer
 * depends on class hierarchy and module copies): retried, a retry that could not be published, rejected,
 * revoked, ignored, or a failure (timed out when the run was abandoned). `decide()` then says how the
 * message is settled. A new error code fails to compile here until it is classified.
 */
import type { ErrorCode } from '../../errors.js';
import type { Outcome } from '../settle/decide.js';

/** The outcomes a task's error can have (the others come from intake and shutdown). */
export type ErrorOutcome = Extract<
  Outcome,
  { kind: 'retried' | 'retry-unpublishable' | 'rejected' | 'revoked' | 'ignored' | 'failed' | 'timed-out' }
>;

function codeOf(error: unknown): ErrorCode | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? (code as ErrorCode) : undefined;
}

/** `timedOut`: the run was abandoned at its hard time limit (a failure then reads as timed out). */
export function classify(error: unknown, timedOut = false): ErrorOutcome {
  const failed: ErrorOutcome = timedOut ? { kind: 'timed-out' } : { kind: 'failed' };
  const code = codeOf(error);
  if (code === undefined) return failed;
  switch (code) {
    case 'TASK_RETRY':
      return { kind: 'retried' };
    case 'TASK_RETRY_UNPUBLISHABLE':
      return { kind: 'retry-unpublishable' };
    case 'TASK_REJECT':
      return { kind: 'rejected', requeue: (error as { requeue?: unknown }).requeue === true };
    case 'TASK_REVOKED':
      // A revoke that terminated the run, even one that also hit its time limit.
      return { kind: 'revoked' };
    case 'TASK_IGNORE':
      return { kind: 'ignored' };
    case 'CONFIG_INVALID':
    case 'PROTOCOL_DECODE':
    case 'PROTOCOL_CONTENT_DISALLOWED':
    case 'PROTOCOL_INVALID':
    case 'PROTOCOL_UNKNOWN_MESSAGE':
    case 'TASK_NOT_REGISTERED':
    case 'TASK_ALREADY_REGISTERED':
    case 'TASK_DEFINITION_INVALID':
    case 'TASK_ARGUMENTS_INVALID':
    case 'TASK_MAX_RETRIES':
    case 'TASK_SOFT_TIME_LIMIT':
    case 'TASK_TIME_LIMIT':
    case 'TASK_GAVE_UP':
    case 'TASK_FAILED':
    case 'BROKER':
    case 'BROKER_UNROUTABLE':
    case 'BACKEND':
    case 'WORKER_STATE':
      return failed;
    default: {
      // A code from elsewhere (a library's `code: 'ECONNREFUSED'`) is a plain failure; ours must be listed.
      const _exhaustive: never = code;
      return failed;
    }
  }
}

/** Errors that are never retried automatically: they already decided what happens, or fail the same way every time. */
export function autoretryable(error: unknown): boolean {
  const o = classify(error);
  return o.kind === 'failed' && codeOf(error) !== 'TASK_ARGUMENTS_INVALID';
}
