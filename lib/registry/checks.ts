/**
 * What `ctx.checkAgain` sends next (ADR-030), decided in one place: the worker publishes it, and tests that run
 * a check task in-process plan their next run with the same rules.
 */
import { GaveUpError } from '../errors.js';
import type { CheckAgainOptions } from './context.js';
import type { CheckPolicy } from './define-task.js';

export interface PlannedCheck {
  /** Empty unless the policy is `positional`: then every argument, in `argNames` order, and no kwargs. */
  args: unknown[];
  kwargs: Record<string, unknown>;
  attempt: number;
}

/**
 * The next run's keyword arguments: the bound parameters, then `update`, then the next attempt number; the first
 * run's id filled in where the policy names a parameter for it. Throws GaveUpError past the attempt limit.
 */
export function planCheckAgain(
  taskName: string,
  checks: CheckPolicy | undefined,
  bound: unknown,
  options: CheckAgainOptions,
  runId: string,
  argNames: readonly string[] = [],
): PlannedCheck {
  const attemptParam = checks?.attemptParam ?? 'attempt';
  const params = (typeof bound === 'object' && bound !== null ? bound : {}) as Record<string, unknown>;
  const raw = params[attemptParam];
  const current = options.attempt ?? (typeof raw === 'number' ? raw : 0);
  const next = current + 1;
  const limit = options.maxAttempts ?? checks?.maxAttempts;
  if (limit !== undefined && next >= limit) throw new GaveUpError(taskName, next);
  const kwargs: Record<string, unknown> = { ...params, ...options.update, [attemptParam]: next };
  if (checks?.firstRunIdParam && kwargs[checks.firstRunIdParam] == null) kwargs[checks.firstRunIdParam] = runId;
  if (checks?.positional) return { args: argNames.map((n) => kwargs[n] ?? null), kwargs: {}, attempt: next };
  return { args: [], kwargs, attempt: next };
}
