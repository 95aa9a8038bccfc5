/**
 * The two kinds of task most of Smarter's apps define, each with its queue and retry policy decided here once:
 * a record a user depends on, written on the operational queue, and an llmclient step that calls the cloud, on
 * the infrastructure queue (ADR-030).
 */
import { type TaskDefinition, defineTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from './task-env.js';

type Definition<P, R, I> = Omit<TaskDefinition<P, R, SmarterDeps, I>, 'queue' | 'retry' | 'deadLetterOnExhaustion'>;

/**
 * A task that writes a record (a charge, a history row): Smarter's autoretry, and once its retries are exhausted
 * its message is kept in the dead-letter queue, so the record can still be written by a replay.
 */
export const recordTask = <P, R, I = unknown>(env: TaskEnv, def: Definition<P, R, I>) =>
  defineTask<P, R, SmarterDeps, I>({
    queue: env.operationalQueue,
    deadLetterOnExhaustion: true,
    retry: env.autoretry,
    ...def,
  });

/** An llmclient task that calls the cloud: retried where a retry can change the outcome (`infrastructureRetry`). */
export const infrastructureTask = <P, R, I = unknown>(env: TaskEnv, def: Definition<P, R, I>) =>
  defineTask<P, R, SmarterDeps, I>({ queue: env.infrastructureQueue, retry: env.infrastructureRetry, ...def });
