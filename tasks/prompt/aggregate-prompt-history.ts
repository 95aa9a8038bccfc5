/** `aggregate_prompt_history`: a no-op in Smarter too (it only logs); kept so Beat's entry has a consumer. */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';

export const aggregatePromptHistory = (env: TaskEnv) =>
  defineTask<Record<string, never>, null, SmarterDeps>({
    name: 'smarter.apps.prompt.tasks.aggregate_prompt_history',
    queue: env.operationalQueue,
    retry: env.autoretry,
    params: z.strictObject({}),
    run(_p, ctx) {
      ctx.logger.info('aggregate_prompt_history: nothing to aggregate (as in Smarter)');
      return null;
    },
  });
