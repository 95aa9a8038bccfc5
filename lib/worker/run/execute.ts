/**
 * Runs one task under its time limits. The soft limit aborts the task's signal with
 * `SoftTimeLimitExceeded` (the task may catch it and clean up); the hard limit stops waiting and fails the
 * run with `TimeLimitExceeded`. Node cannot kill a promise, so a run that ignores its signal past the hard
 * limit is abandoned, not stopped: its slot is freed, and the worker logs it.
 */
import { SoftTimeLimitExceededError, TimeLimitExceededError, coerceError, hasCode } from '../../errors.js';
import type { Deadline, Deadlines } from './deadlines.js';

export type RunResult = { ok: true; value: unknown } | { ok: false; error: Error; abandoned?: boolean };

export interface Limits {
  /** Seconds, or null for none. */
  soft: number | null;
  hard: number | null;
}

/**
 * A run's abort signal, made on first use: most tasks never read it and are never aborted, and an
 * AbortController with its signal is the costliest object of a run. Aborting before anyone read the
 * signal still leaves one that reads as aborted, with the reason.
 */
export class RunControl {
  private controller: AbortController | undefined;
  private listener: ((reason: unknown) => void) | undefined;

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  /** As `AbortController.abort`: only the first abort counts. */
  abort(reason: unknown): void {
    const signal = this.signal;
    if (signal.aborted) return;
    (this.controller as AbortController).abort(reason);
    this.listener?.(reason);
  }

  /** The run's own watcher (one per run), told after the signal's listeners. */
  onAbort(listener: (reason: unknown) => void): void {
    this.listener = listener;
  }

  private failer: ((error: Error) => boolean) | undefined;

  /**
   * An error of the run's own that escaped it (a timer, stream or emitter it started threw; a promise it made was
   * rejected unhandled): the run ends now, failed with it, and its signal is aborted so that the rest of it may
   * stop. False when the run is no longer waited for.
   */
  fail(error: Error): boolean {
    return this.failer?.(error) ?? false;
  }

  /** Set by `runWithLimits` while it waits for the run. */
  onFail(failer: ((error: Error) => boolean) | undefined): void {
    this.failer = failer;
  }
}

/**
 * Runs given up on (hard time limit, revoke with terminate, a cancel) whose code has not ended yet: in this process,
 * since what they still hold (sockets, timers, memory) is the process's; a recycle past a bound frees it.
 */
let abandonedLive = 0;
export const abandonedRunsStillGoing = (): number => abandonedLive;

const ignore = (): void => undefined;

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  (typeof v === 'object' || typeof v === 'function') &&
  v !== null &&
  typeof (v as { then?: unknown }).then === 'function';

/**
 * The run under its limits. Code that returns a value (or throws, or reports an error of its own as it starts)
 * has ended: its result comes back at once, with no promise, since under the containment's async hooks every
 * promise (and every `await`'s throwaway) costs a hook call and an object. Code that returns a promise is
 * waited for under its limits: one promise and one reaction of ours, the cleanup done where the result is
 * settled rather than in a `finally`.
 */
export function runWithLimits(
  run: () => unknown,
  limits: Limits,
  control: RunControl,
  deadlines: Deadlines,
): RunResult | Promise<RunResult> {
  let early: RunResult | undefined;
  control.onFail((error) => {
    if (early) return false;
    early = { ok: false, error };
    control.onFail(undefined);
    control.abort(error);
    return true;
  });
  let returned: unknown;
  try {
    returned = run();
  } catch (err) {
    early ??= { ok: false, error: coerceError(err) };
  }
  if (early || !isThenable(returned)) {
    control.onFail(undefined);
    // Ended as it started, failed: what it returned is no longer waited for, but its rejection is still handled.
    if (early && isThenable(returned)) returned.then(ignore, ignore);
    return early ?? { ok: true, value: returned };
  }
  const pending = returned;
  return new Promise<RunResult>((settle) => {
    let soft: Deadline | undefined;
    let hard: Deadline | undefined;
    let settled = false;
    const resolve = (r: RunResult): boolean => {
      if (settled) return false;
      settled = true;
      control.onFail(undefined);
      soft?.cancel();
      hard?.cancel();
      settle(r);
      return true;
    };
    control.onFail((error) => {
      if (!resolve({ ok: false, error })) return false;
      control.abort(error);
      return true;
    });
    let ended = false;
    let abandoned = false;
    const abandon = (r: RunResult) => {
      if (!resolve(r) || ended) return;
      abandoned = true;
      abandonedLive++;
    };
    const end = () => {
      ended = true;
      if (abandoned) abandonedLive--;
    };
    Promise.resolve(pending).then(
      (value) => {
        end();
        resolve({ ok: true, value });
      },
      (err: unknown) => {
        end();
        resolve({ ok: false, error: coerceError(err) });
      },
    );
    // Revoke with terminate, or a cancel (its connection lost): stop waiting for the run at once, as Celery kills
    // the child process.
    control.onAbort((reason) => {
      if (hasCode(reason, 'TASK_REVOKED') || hasCode(reason, 'TASK_RETRY')) {
        abandon({ ok: false, error: reason as Error, abandoned: true });
      }
    });
    if (limits.soft !== null) {
      const s = limits.soft;
      soft = deadlines.add(s * 1000, () => control.abort(new SoftTimeLimitExceededError(s)));
    }
    if (limits.hard !== null) {
      const h = limits.hard;
      hard = deadlines.add(h * 1000, () => {
        const error = new TimeLimitExceededError(h);
        control.abort(error);
        abandon({ ok: false, error, abandoned: true });
      });
    }
  });
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
