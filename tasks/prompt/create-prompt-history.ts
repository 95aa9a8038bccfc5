/** `create_prompt_history`: one row of a conversation's history. A prompt that is gone is logged, not retried. */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { djangoJson, exists, insertModel } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { pk } from '../db/django.js';

export const createPromptHistory = (env: TaskEnv) =>
  defineTask<{ prompt_id: number; request: unknown; response: unknown; messages: unknown }, null, SmarterDeps>({
    name: 'smarter.apps.prompt.tasks.create_prompt_history',
    queue: env.operationalQueue,
    deadLetterOnExhaustion: true,
    retry: env.autoretry,
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
