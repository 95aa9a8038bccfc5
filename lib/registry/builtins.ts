/**
 * Celery's built-in tasks that producers and Beat may send to any worker (celery/app/builtins.py).
 */
import * as z from 'zod';
import { PythonException } from '../errors.js';
import type { Signature } from '../protocol/types.js';
import { ANY_QUEUE, defineTask, type AnyTask } from './define-task.js';

const signatureSchema = z.custom<Signature>(
  (v) => typeof v === 'object' && v !== null && typeof (v as { task?: unknown }).task === 'string',
  {
    message: 'expected a signature object',
  },
);

/** `celery.accumulate(*args, index=None)`: returns its arguments, or one of them. */
export const accumulate = defineTask({
  name: 'celery.accumulate',
  queue: ANY_QUEUE,
  varArgs: true,
  params: z.object({ args: z.array(z.unknown()), index: z.number().int().nullable().optional() }),
  run: ({ args, index }) => (index === undefined || index === null ? args : args[index]),
});

/** `celery.chain` is not a real task in Celery 5 either. */
export const chain = defineTask({
  name: 'celery.chain',
  queue: ANY_QUEUE,
  varArgs: true,
  params: z.object({ args: z.array(z.unknown()) }).passthrough(),
  run: () => {
    throw new PythonException('NotImplementedError', 'builtins', 'chain is not a real task');
  },
});

/** `celery.group(tasks, result, group_id, partial_args)`: sends each member with the group id. */
export const group = defineTask({
  name: 'celery.group',
  queue: ANY_QUEUE,
  argNames: ['tasks', 'result', 'group_id', 'partial_args', 'add_to_parent'],
  params: z.object({
    tasks: z.array(signatureSchema),
    result: z.unknown().optional(),
    group_id: z.string().nullable().optional(),
    partial_args: z.array(z.unknown()).nullable().optional(),
    add_to_parent: z.boolean().optional(),
  }),
  run: async ({ tasks, group_id, partial_args }, ctx) => {
    const ids: string[] = [];
    for (const [i, t] of tasks.entries()) {
      const options = { ...t.options, group_id: group_id ?? ctx.id, group_index: i };
      ids.push(await ctx.applySignature({ ...t, options }, partial_args ?? []));
    }
    return ids;
  },
});

const READY = new Set(['SUCCESS', 'FAILURE', 'REVOKED']);

/**
 * `celery.chord_unlock(group_id, callback, interval, max_retries, result)`: for backends without native
 * chords, polls the header's results and applies the body when all are ready (retrying itself meanwhile).
 */
export const chordUnlock = defineTask({
  name: 'celery.chord_unlock',
  queue: ANY_QUEUE,
  argNames: ['group_id', 'callback', 'interval', 'max_retries', 'result'],
  params: z
    .object({
      group_id: z.string(),
      callback: signatureSchema,
      interval: z.number().positive().nullable().optional(),
      max_retries: z.number().int().nullable().optional(),
      result: z.array(z.unknown()).nullable().optional(),
    })
    .passthrough(),
  retry: { maxRetries: null },
  run: async ({ group_id, callback, interval, result }, ctx) => {
    const ids = (result ?? []).map((tuple, i) => {
      const id = (tuple as [[unknown]])[0]?.[0];
      if (typeof id !== 'string') throw new TypeError(`result[${i}] is not a result tuple`);
      return id;
    });
    const metas = await Promise.all(ids.map((id) => ctx.getResult(id)));
    if (metas.some((m) => !m || !READY.has(String(m.status)))) {
      return ctx.retry({ countdown: interval ?? 1, maxRetries: null });
    }
    const failed = metas.findIndex((m) => m?.status !== 'SUCCESS');
    if (failed >= 0) {
      throw new PythonException(
        'ChordError',
        'celery.exceptions',
        `Dependency ${ids[failed]} raised ${JSON.stringify(metas[failed]?.result)}`,
      );
    }
    ctx.logger.info(`chord ${group_id} complete; applying its body`);
    return ctx.applySignature(callback, [metas.map((m) => m?.result)]);
  },
});

/** `celery.backend_cleanup`: our backends (redis, rpc) expire results by themselves, as Celery's do. */
export const backendCleanup = defineTask({
  name: 'celery.backend_cleanup',
  queue: ANY_QUEUE,
  params: z.object({}).passthrough(),
  run: () => null,
});

export const BUILTIN_TASKS: readonly AnyTask[] = [accumulate, chain, group, chordUnlock, backendCleanup];
