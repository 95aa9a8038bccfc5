/**
 * `create_prompt_tool_call_history`: a tool call the LLM made. A missing prompt or plugin raises
 * SmarterValueError and is retried, as in Smarter. `function_args` is a VARCHAR(255) in Smarter's schema; a
 * longer value made the whole row fail on strict MariaDB. We store its first 254 characters and an ellipsis
 * (the full arguments are still in `request`), and log that we did.
 */
import * as z from 'zod';
import { dumpsPython } from '../../lib/protocol/json.js';
import { djangoJson, exists, insertModel } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { recordTask } from '../env/queued-task.js';
import { pk } from '../db/django.js';
import { SmarterValueError } from '../errors.js';

export const FUNCTION_ARGS_MAX = 255;

/** Fits `function_args` into its column; returns the stored text and whether it was cut. */
export function fitFunctionArgs(args: unknown): { text: string | null; cut: boolean } {
  if (args === null || args === undefined) return { text: null, cut: false };
  const text = typeof args === 'string' ? args : dumpsPython(args);
  const chars = [...text];
  if (chars.length <= FUNCTION_ARGS_MAX) return { text, cut: false };
  return { text: `${chars.slice(0, FUNCTION_ARGS_MAX - 1).join('')}…`, cut: true };
}

type Params = {
  prompt_id: number;
  plugin_meta_id: number | null;
  function_name: string | null;
  function_args: unknown;
  request: unknown;
  response: unknown;
};

export const createPromptToolCallHistory = (env: TaskEnv) =>
  recordTask<Params, null>(env, {
    name: 'smarter.apps.prompt.tasks.create_prompt_tool_call_history',
    params: z.strictObject({
      prompt_id: pk(),
      plugin_meta_id: pk().nullable(),
      function_name: z.string().max(255).nullable(),
      function_args: z.unknown(),
      request: z.unknown(),
      response: z.unknown(),
    }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      if (!(await exists(db, 'prompt_prompt', p.prompt_id))) {
        throw new SmarterValueError(`Prompt ${p.prompt_id} does not exist`);
      }
      if (p.plugin_meta_id !== null && !(await exists(db, 'plugin_pluginmeta', p.plugin_meta_id))) {
        throw new SmarterValueError(`PluginMeta ${p.plugin_meta_id} does not exist`);
      }
      const args = fitFunctionArgs(p.function_args);
      if (args.cut) {
        ctx.logger.warn('create_prompt_tool_call_history: function_args longer than its column; stored truncated', {
          prompt_id: p.prompt_id,
          function_name: p.function_name,
          length: [...String(typeof p.function_args === 'string' ? p.function_args : dumpsPython(p.function_args))]
            .length,
        });
      }
      await insertModel(db, 'prompt_prompttoolcall', {
        prompt_id: p.prompt_id,
        plugin_id: p.plugin_meta_id,
        function_name: p.function_name,
        function_args: args.text,
        request: djangoJson(p.request),
        response: djangoJson(p.response),
      });
      return null;
    },
  });
