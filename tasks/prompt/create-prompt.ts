/** `create_prompt(session_key, llmclient_id)`: Smarter has no caller left, but a queued message still runs. */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { insertModel } from '../db/django.js';
import { type SmarterDeps, type TaskEnv, pk } from '../deps.js';

export const createPrompt = (env: TaskEnv) =>
  defineTask<{ session_key: string; llmclient_id: number }, null, SmarterDeps>({
    name: 'smarter.apps.prompt.tasks.create_prompt',
    queue: env.operationalQueue,
    deadLetterOnExhaustion: true,
    retry: env.autoretry,
    params: z.strictObject({ session_key: z.string().min(1).max(255), llmclient_id: pk() }),
    async run(p, ctx) {
      // Django fills the other CharFields with '' and `version` with its default.
      await insertModel(ctx.deps.db, 'prompt_prompt', {
        name: '',
        version: '1.0.0',
        session_key: p.session_key,
        llmclient_id: p.llmclient_id,
        user_agent: '',
        url: '',
      });
      return null;
    },
  });
