/** What the worker reports as it handles tasks; Celery events (`-E`) and metrics subscribe to it. */
import type { TaskMessage } from '../protocol/types.js';

export interface TaskEvents {
  received(msg: TaskMessage): void;
  started(msg: TaskMessage): void;
  succeeded(msg: TaskMessage, result: unknown, runtimeSeconds: number): void;
  failed(msg: TaskMessage, error: Error, traceback: string): void;
  retried(msg: TaskMessage, error: unknown, traceback: string): void;
  rejected(taskId: string, requeue: boolean): void;
  revoked(taskId: string, how: { expired: boolean; terminated: boolean; signum: string | null }): void;
  /** A message that never became a task (undecodable, refused, unknown task), with its queue. */
  poisoned(queue: string, reason: string): void;
  /** A message of a task this worker does not implement was forwarded to queue `to`. */
  forwarded?(task: string, to: string): void;
  /** Sends what is held for a batch now: the broker is about to close. */
  flush?(): void;
}

export const noEvents: TaskEvents = {
  received() {},
  started() {},
  succeeded() {},
  failed() {},
  retried() {},
  rejected() {},
  revoked() {},
  poisoned() {},
};
