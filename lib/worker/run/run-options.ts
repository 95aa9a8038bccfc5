/**
 * How one run is configured, decided in one place: the message's own headers first (Celery's
 * `ignore_result` and `timelimit` travel with it), then the task's options, then the worker's defaults.
 */
import type { TaskMessage } from '../../protocol/types.js';
import type { AnyTask } from '../../registry/define-task.js';
import type { AckPolicy } from '../settle/decide.js';
import { type Limits, effectiveLimits } from './execute.js';

export interface RunDefaults extends AckPolicy {
  /** Seconds a run may stay unsettled before it is reported as waiting instead of working (ADR-030). */
  waitBudget: number | null;
  trackStarted: boolean;
  ignoreResult: boolean;
  timeLimit: number | null;
  softTimeLimit: number | null;
  /** Celery's `result_extended`: a stored state also names the task, its arguments, worker, retries and queue. */
  resultExtended?: boolean;
}

export interface RunOptions {
  readonly policy: AckPolicy;
  readonly ignoreResult: boolean;
  readonly trackStarted: boolean;
  readonly limits: Limits;
  readonly waitBudget: number | null;
}

/** A task's time limits as this worker runs them (set by `time_limit` remote control), in place of the task's own. */
export interface TaskOverrides {
  timeLimit?: number | undefined;
  softTimeLimit?: number | undefined;
}

type TaskRunOptions = Pick<
  AnyTask<unknown>,
  | 'acksLate'
  | 'acksOnFailureOrTimeout'
  | 'deadLetterOnExhaustion'
  | 'ignoreResult'
  | 'trackStarted'
  | 'timeLimit'
  | 'softTimeLimit'
>;

/** Whether a task acks after its run: its own setting, else the worker's (`task_acks_late`). */
export function acksLateOf(task: Pick<AnyTask<unknown>, 'acksLate'>, defaults: Pick<RunDefaults, 'acksLate'>): boolean {
  return task.acksLate ?? defaults.acksLate;
}

export function resolveRunOptions(
  msg: Pick<TaskMessage, 'ignoreResult' | 'timelimit'>,
  task: TaskRunOptions,
  defaults: RunDefaults,
  overrides?: TaskOverrides,
): RunOptions {
  const times = overrides ?? task;
  return {
    policy: {
      acksLate: acksLateOf(task, defaults),
      acksOnFailureOrTimeout: task.acksOnFailureOrTimeout ?? defaults.acksOnFailureOrTimeout,
      deadLetterOnFailure: task.deadLetterOnExhaustion ?? false,
    },
    ignoreResult: msg.ignoreResult ?? task.ignoreResult ?? defaults.ignoreResult,
    trackStarted: task.trackStarted ?? defaults.trackStarted,
    limits: effectiveLimits(
      msg.timelimit,
      { timeLimit: times.timeLimit, softTimeLimit: times.softTimeLimit },
      { hard: defaults.timeLimit, soft: defaults.softTimeLimit },
    ),
    waitBudget: defaults.waitBudget,
  };
}
