/**
 * Lifecycle hooks for code that embeds the worker (`createWorker({ hooks })`), as Celery's signals
 * (`celery/signals.py`: task_prerun, task_postrun, task_success, task_failure, task_retry, worker_ready,
 * worker_shutdown) and BullMQ's worker events: typed events, each listener called in order, synchronously, where
 * the worker is at that moment. A listener that throws, or returns a promise that rejects, is logged and never
 * changes the run or stops the worker (Celery logs a failing receiver the same way); a promise is not waited for.
 */
import type { Logger } from '../logger.js';
import type { TaskMessage } from '../protocol/types.js';
import { coerceError } from '../errors.js';
import { type TaskEvents, noEvents } from '../worker/events.js';

/** The run an event is about: its message, as decoded. */
export interface TaskHookBase {
  taskId: string;
  /** The task's registered name. */
  task: string;
  request: Readonly<TaskMessage>;
}

/** The state a run ended in, as `task_postrun`'s `state`. */
export type PostrunState = 'SUCCESS' | 'FAILURE' | 'RETRY' | 'REVOKED';

export interface HookEvents {
  /** Before the task's code runs (Celery `task_prerun`). */
  taskPrerun: TaskHookBase;
  /** After the run ended, whatever the way (Celery `task_postrun`), after the event of that way. */
  taskPostrun: TaskHookBase & { state: PostrunState; retval: unknown };
  /** The run returned; its result is stored (Celery `task_success`). */
  taskSuccess: TaskHookBase & { result: unknown; runtimeSeconds: number };
  /** The run failed, or was abandoned at its hard time limit (Celery `task_failure`). */
  taskFailure: TaskHookBase & { error: Error; traceback: string };
  /** The run ended in a retry: one sent by the task, an autoretry, or a cancel (Celery `task_retry`). */
  taskRetry: TaskHookBase & { reason: unknown };
  /** The worker consumes its queues (Celery `worker_ready`). */
  workerReady: { nodeName: string };
  /** The worker stopped: its runs ended or were cancelled, its connections closed (Celery `worker_shutdown`). */
  workerShutdown: { nodeName: string };
}

export type HookListener<E extends keyof HookEvents> = (event: HookEvents[E]) => unknown;

export class WorkerHooks {
  private readonly listeners: { [E in keyof HookEvents]?: Array<HookListener<E>> } = {};
  /** Runs started and not yet ended: a failure of a message that never ran (an unknown task) is no task_failure. */
  private readonly running = new Map<string, TaskMessage>();
  private logger: Logger | undefined;

  /** Adds a listener; returns what removes it. */
  on<E extends keyof HookEvents>(event: E, listener: HookListener<E>): () => void {
    const list = (this.listeners[event] ??= []) as Array<HookListener<E>>;
    list.push(listener);
    return () => {
      const i = list.indexOf(listener);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** Calls each listener of the event; one that fails is logged, the others still run. */
  emit<E extends keyof HookEvents>(event: E, payload: HookEvents[E]): void {
    for (const listener of [...(this.listeners[event] ?? [])]) {
      try {
        const r = listener(payload);
        if (r instanceof Promise) r.catch((err: unknown) => this.failed(event, err));
      } catch (err) {
        this.failed(event, err);
      }
    }
  }

  private failed(event: string, err: unknown): void {
    this.logger?.error(`a ${event} hook failed`, { hook: event, error: coerceError(err).stack });
  }

  /** The worker's task events as hook events (createWorker adds it to the worker's sinks). */
  taskEvents(logger: Logger): TaskEvents {
    this.logger = logger;
    const base = (m: TaskMessage): TaskHookBase => ({ taskId: m.id, task: m.task, request: m });
    const end = (m: TaskMessage, state: PostrunState, retval: unknown) => {
      this.running.delete(m.id);
      this.emit('taskPostrun', { ...base(m), state, retval });
    };
    return {
      ...noEvents,
      started: (m) => {
        this.running.set(m.id, m);
        this.emit('taskPrerun', base(m));
      },
      succeeded: (m, result, runtimeSeconds) => {
        this.emit('taskSuccess', { ...base(m), result, runtimeSeconds });
        end(m, 'SUCCESS', result);
      },
      failed: (m, error, traceback) => {
        if (!this.running.has(m.id)) return;
        this.emit('taskFailure', { ...base(m), error, traceback });
        end(m, 'FAILURE', error);
      },
      retried: (m, reason) => {
        this.emit('taskRetry', { ...base(m), reason });
        end(m, 'RETRY', reason);
      },
      revoked: (id, how) => {
        const m = this.running.get(id);
        if (m && how.terminated) end(m, 'REVOKED', null);
      },
    };
  }
}
