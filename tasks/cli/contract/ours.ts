/**
 * This worker's side of the contract, with every setting at its default (a queue an operator renamed is not a
 * difference with Smarter's source): the registry's Smarter tasks, the Beat schedule, and the settings that
 * feed their queues and retries.
 */
import * as z from 'zod';
import type { AnyTask, RetryPolicy } from '../../../lib/registry/define-task.js';
import { type BeatEntry, smarterSchedule } from '../../beat-schedule.js';
import { smarterTasks } from '../../index.js';
import { SMARTER_SETTINGS } from '../../settings.js';

export interface OurParam {
  name: string;
  required: boolean;
  /** The value a call without it gets: the schema's default, or None (`undefined` → null) when merely optional. */
  default: unknown;
}

export interface OurTask {
  name: string;
  queue: string;
  retry: RetryPolicy | undefined;
  params: OurParam[];
  varArgs: boolean;
  /** Keyword arguments the schema accepts beyond `params` (a non-strict object accepts any). */
  anyKeyword: boolean;
}

/** The settings a Smarter decorator or Beat entry may name, by Smarter's attribute (either line's spelling). */
export const SETTING_OF: Record<string, keyof typeof SMARTER_SETTINGS> = {
  llmclient_tasks_celery_task_queue: 'operationalQueue',
  infrastructure_tasks_celery_task_queue: 'infrastructureQueue',
  llmclient_tasks_celery_max_retries: 'maxRetries',
  llmclient_tasks_celery_retry_backoff: 'retryBackoff',
};

/** Line A spells the app `llm_client`; both lines' attributes name the same setting. */
export const settingKey = (attr: string) => SETTING_OF[attr.replace(/^llm_client_/, 'llmclient_')];

export const defaultQueues = () => ({
  operationalQueue: SMARTER_SETTINGS.operationalQueue.default,
  infrastructureQueue: SMARTER_SETTINGS.infrastructureQueue.default,
});

function paramsOf(t: AnyTask<unknown>): { params: OurParam[]; anyKeyword: boolean } {
  const schema = t.params;
  if (!(schema instanceof z.ZodObject)) return { params: [], anyKeyword: true };
  const shape = schema.shape as Record<string, z.ZodType>;
  const params = t.argNames.map((name) => {
    const field = shape[name];
    const optional = field === undefined || field.safeParse(undefined).success;
    const fallback = field instanceof z.ZodDefault ? field.def.defaultValue : null;
    return { name, required: !optional, default: optional ? fallback : undefined };
  });
  // z.strictObject refuses unknown keys; z.object and z.looseObject let them through.
  const anyKeyword = schema.safeParse({ ['\u0000unknown']: 1 }).success || !isStrict(schema);
  return { params, anyKeyword };
}

function isStrict(schema: z.ZodObject): boolean {
  const catchall = (schema.def as { catchall?: z.ZodType }).catchall;
  return catchall instanceof z.ZodNever;
}

export function ourTasks(): OurTask[] {
  const tasks = smarterTasks({
    ...defaultQueues(),
    maxRetries: SMARTER_SETTINGS.maxRetries.default,
    retryBackoff: SMARTER_SETTINGS.retryBackoff.default,
  }) as ReadonlyArray<AnyTask<unknown>>;
  return tasks.map((t) => ({ name: t.name, queue: t.queue, retry: t.retry, varArgs: t.varArgs, ...paramsOf(t) }));
}

export function ourBeat(): BeatEntry[] {
  return smarterSchedule(defaultQueues());
}
