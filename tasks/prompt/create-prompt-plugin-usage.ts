/** `create_prompt_plugin_usage(**kwargs)`: every kwarg is required; a missing one raises SmarterValueError (retried, as in Smarter). */
import * as z from 'zod';
import { insertModel } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { recordTask } from '../env/queued-task.js';
import { pk } from '../db/django.js';
import { SmarterValueError } from '../errors.js';

type Params = { prompt_id?: number | null; plugin_id?: number | null; input_text?: string | null };

export const createPromptPluginUsage = (env: TaskEnv) =>
  recordTask<Params, null>(env, {
    name: 'smarter.apps.prompt.tasks.create_prompt_plugin_usage',
    varArgs: true,
    params: z.object({ prompt_id: pk().nullish(), plugin_id: pk().nullish(), input_text: z.string().nullish() }),
    async run(p, ctx) {
      const missing = (['prompt_id', 'plugin_id', 'input_text'] as const).filter(
        (k) => p[k] === undefined || p[k] === null,
      );
      if (missing.length > 0) throw new SmarterValueError(`create_prompt_plugin_usage() missing ${missing.join(', ')}`);
      await insertModel(ctx.deps.db, 'prompt_promptpluginusage', {
        prompt_id: p.prompt_id,
        plugin_id: p.plugin_id,
        input_text: p.input_text,
      });
      return null;
    },
  });
