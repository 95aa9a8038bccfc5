/**
 * Runs one task under its time limits. The soft limit aborts the task's signal with
 * `SoftTimeLimitExceeded` (the task may catch it and clean up); the hard limit stops waiting and fails the
 * run with `TimeLimitExceeded`. Node cannot kill a promise, so a run that ignores its signal past the hard
 * limit is abandoned, not stopped: its slot is freed, and the worker logs it.
 */
import { SoftTimeLimitExceededError, TimeLimitExceededError, coerceError, hasCode } from '../errors.js';

export type RunResult = { ok: true; value: unknown } | { ok: false; error: Error; abandoned?: boolean };

export interface Limits {
  /** Seconds, or null for none. */
  soft: number | null;
  hard: number | null;
}

export async function runWithLimits(
  run: (signal: AbortSignal) => Promise<unknown>,
  limits: Limits,
  controller: AbortController,
): Promise<RunResult> {
  const timers: NodeJS.Timeout[] = [];
  try {
    const work = (async () => run(controller.signal))().then(
      (value): RunResult => ({ ok: true, value }),
      (err: unknown): RunResult => ({ ok: false, error: coerceError(err) }),
    );
    if (limits.soft !== null) {
      const soft = limits.soft;
      timers.push(setTimeout(() => controller.abort(new SoftTimeLimitExceededError(soft)), soft * 1000));
    }
    // Revoke with terminate: stop waiting for the run at once, as Celery kills the child process.
    const terminated = new Promise<RunResult>((resolve) => {
      controller.signal.addEventListener('abort', () => {
        const reason: unknown = controller.signal.reason;
        if (hasCode(reason, 'TASK_REVOKED')) resolve({ ok: false, error: reason as Error, abandoned: true });
      });
    });
    if (limits.hard === null) return await Promise.race([work, terminated]);
    const hard = limits.hard;
    const expired = new Promise<RunResult>((resolve) => {
      timers.push(
        setTimeout(() => {
          const error = new TimeLimitExceededError(hard);
          controller.abort(error);
          resolve({ ok: false, error, abandoned: true });
        }, hard * 1000),
      );
    });
    return await Promise.race([work, expired, terminated]);
  } finally {
    for (const t of timers) clearTimeout(t);
  }
}

/** Celery: the message's `timelimit` wins when truthy, else the task's, else the worker's default. */
export function effectiveLimits(
  header: [number | null, number | null],
  task: { timeLimit?: number | undefined; softTimeLimit?: number | undefined },
  defaults: { hard: number | null; soft: number | null },
): Limits {
  return {
    hard: header[0] || task.timeLimit || defaults.hard || null,
    soft: header[1] || task.softTimeLimit || defaults.soft || null,
  };
}
