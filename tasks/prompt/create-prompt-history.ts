/** `create_prompt_history`: one row of a conversation's history. A prompt that is gone is logged, not retried. */
import * as z from 'zod';
import { djangoJson, exists, insertModel } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { recordTask } from '../env/queued-task.js';
import { pk } from '../db/django.js';

export const createPromptHistory = (env: TaskEnv) =>
  recordTask<{ prompt_id: number; request: unknown; response: unknown; messages: unknown }, null>(env, {
    name: 'smarter.apps.prompt.tasks.create_prompt_history',
    params: z.strictObject({ prompt_id: pk(), request: z.unknown(), response: z.unknown(), messages: z.unknown() }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      if (!(await exists(db, 'prompt_prompt', p.prompt_id))) {
        ctx.logger.error('create_prompt_history: prompt does not exist; history not recorded', {
          prompt_id: p.prompt_id,
        });
        return null;
      }
      await insertModel(db, 'prompt_prompthistory', {
        prompt_id: p.prompt_id,
        request: djangoJson(p.request),
        response: djangoJson(p.response),
        messages: djangoJson(p.messages),
      });
      return null;
    },
  });
