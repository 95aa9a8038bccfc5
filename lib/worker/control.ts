/**
 * What remote control (pidbox) and the HTTP endpoints may see and do of a worker: read-only views and the
 * commands Celery's control offers, never the worker's own maps.
 */
import type { TaskMessage } from '../protocol/types.js';
import type { RevokedView } from './revoked.js';
import type { WorkerState } from './state.js';

export interface RunView {
  readonly msg: TaskMessage;
  readonly startedAt: number;
  /** Its message is settled (early ack, or done). */
  readonly acknowledged: boolean;
  readonly queue: string;
}

export interface WorkerCounters {
  readonly active: number;
  readonly reserved: number;
  readonly held: number;
  /** Runs by task name. */
  readonly processed: ReadonlyMap<string, number>;
  readonly overWaitBudget: ReadonlyMap<string, number>;
  readonly droppedStale: number;
  readonly offloaded: number;
  readonly deadLetterFailedAttempts: number;
  readonly deadLetterUnsent: number;
  /** Follow-ups the broker refused, held and sent again until it takes them (early ack). */
  readonly publishesHeld: number;
}

export interface WorkerControl {
  readonly state: WorkerState;
  readonly nodeName: string;
  readonly concurrency: number;
  /** Prefetch per consumer (multiplier × concurrency). */
  readonly prefetchCount: number;
  readonly startedAt: number;
  /** The queues it is configured to consume. */
  readonly queues: readonly string[];
  readonly revoked: RevokedView;
  counters(): WorkerCounters;
  activeRuns(): RunView[];
  reservedMessages(): TaskMessage[];
  heldMessages(): TaskMessage[];
  registeredNames(): string[];
  activeQueues(): string[];
  revokeTasks(ids: readonly string[], terminate: boolean): string[];
  /** Stamps revoked (`revoke_by_stamped_headers`): later messages carrying one are discarded as revoked. */
  revokeStamps(headers: Readonly<Record<string, readonly string[]>>): void;
  /** Revoked ids another worker knows (mingle, `hello`), with when they were revoked (epoch ms); returns how many were new. */
  learnRevoked(entries: Iterable<readonly [string, number]>): number;
  setRateLimit(taskName: string, rate: string | null): boolean;
  setTimeLimits(taskName: string, soft: number | null, hard: number | null): boolean;
  addConsumer(queue: string): Promise<void>;
  /** Runs at once from now on (pool_grow, pool_shrink, autoscale). */
  resize(slots: number): void;
  cancelConsumer(queue: string): Promise<void>;
}
