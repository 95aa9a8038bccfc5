/** `create_prompt(session_key, llmclient_id)`: Smarter has no caller left, but a queued message still runs. */
import * as z from 'zod';
import { pythonDefaults } from '../db/django-defaults.js';
import { insertModel } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { recordTask } from '../env/queued-task.js';
import { pk } from '../db/django.js';

export const createPrompt = (env: TaskEnv) =>
  recordTask<{ session_key: string; llmclient_id: number }, null>(env, {
    name: 'smarter.apps.prompt.tasks.create_prompt',
    params: z.strictObject({ session_key: z.string().min(1).max(255), llmclient_id: pk() }),
    async run(p, ctx) {
      // `Prompt.objects.create(session_key=…, llmclient=…)`: Django's defaults for the rest, which leave the NOT NULL
      // `ip_address` and `user_profile` NULL, so Smarter's database refuses the row (error 1048), and so does this.
      await insertModel(ctx.deps.db, 'prompt_prompt', {
        ...pythonDefaults('prompt_prompt'),
        session_key: p.session_key,
        llmclient_id: p.llmclient_id,
        user_profile_id: null,
      });
      return null;
    },
  });
