/**
 * Which task an error belongs to. Each run's task code runs inside an `AsyncLocalStorage` scope; everything it
 * starts (timers, promises, streams, emitters, sockets) carries that scope, so an exception nobody catches or a
 * rejection nobody handles, reported to the process, can be traced to the run that started it. The process-level
 * handlers (lib/app/signals.ts) end that run through its normal outcome path and keep the process; an error
 * that belongs to no run is counted and logged, and an uncaught one stops the worker warmly.
 *
 * A callback queued with `queueMicrotask` that throws is the one case Node reports without its scope: it counts as
 * belonging to no task.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export const CONTAINED_KINDS = ['task_uncaught', 'task_rejection', 'orphan_rejection', 'orphan_uncaught'] as const;
export type ContainedKind = (typeof CONTAINED_KINDS)[number];

export interface RunScope {
  readonly task: string;
  readonly id: string;
  /** Ends the run as failed with `error` (retried if its policy says so); false when the run had already ended. */
  fail(error: Error): boolean;
}

const scopes = new AsyncLocalStorage<RunScope>();

/** Runs a task's code in its run's scope: whatever it starts is attributed to that run. */
export function inRunScope<T>(scope: RunScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** The run whose code (or a callback it started) is executing now, if any. */
export function currentRun(): RunScope | undefined {
  return scopes.getStore();
}

/** Errors the process kept running through, by kind, since it started (what /metrics and /healthz report). */
export class ContainedErrors {
  private readonly counts = new Map<ContainedKind, number>(CONTAINED_KINDS.map((k) => [k, 0]));

  add(kind: ContainedKind): void {
    this.counts.set(kind, this.count(kind) + 1);
  }

  count(kind: ContainedKind): number {
    return this.counts.get(kind) ?? 0;
  }

  get total(): number {
    return CONTAINED_KINDS.reduce((n, k) => n + this.count(k), 0);
  }

  /** `task_uncaught 1, orphan_rejection 2`: the kinds seen, for /healthz; empty when none. */
  summary(): string {
    return CONTAINED_KINDS.filter((k) => this.count(k) > 0)
      .map((k) => `${k} ${this.count(k)}`)
      .join(', ');
  }
}

/** The process's count: its handlers are process-wide, so is what they saw. */
export const containedErrors = new ContainedErrors();
