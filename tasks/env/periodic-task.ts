/**
 * A task Beat sends without arguments: Smarter's `@app.task` on a periodic job. It takes no parameters (any sent
 * are refused, as Python's signature refuses them) and runs on its queue, retried where Smarter's decorator says.
 */
import * as z from 'zod';
import type { TaskContext } from '../../lib/registry/context.js';
import { type TaskDefinition, defineTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps } from './task-env.js';

/** A task definition without parameters: its run is given only the context. */
export type PeriodicTask<R> = Omit<TaskDefinition<Record<string, never>, R, SmarterDeps>, 'params' | 'run'> & {
  run: (ctx: TaskContext<SmarterDeps>) => Promise<R> | R;
};

export const periodicTask = <R>({ run, ...options }: PeriodicTask<R>) =>
  defineTask<Record<string, never>, R, SmarterDeps>({
    ...options,
    params: z.strictObject({}),
    run: (_p, ctx) => run(ctx),
  });
