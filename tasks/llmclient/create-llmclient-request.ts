/**
 * `create_llmclient_request(llmclient_id, request_data)`: the request an LLMClient received. An unknown
 * LLMClient raises DoesNotExist (retried, as in Smarter). Smarter read the session key with
 * `request_data[key]`, so a request without one raised KeyError and was lost after its retries; the column is
 * nullable, so we store the row with a NULL session key instead.
 */
import * as z from 'zod';
import { djangoJson, exists, insertModel } from '../db/django.js';
import { SESSION_KEY_NAME, pk } from '../db/django.js';
import type { TaskEnv } from '../env/task-env.js';
import { recordTask } from '../env/queued-task.js';
import { DoesNotExist } from '../errors.js';

export const createLlmclientRequest = (env: TaskEnv) =>
  recordTask<{ llmclient_id: number; request_data: Record<string, unknown> }, null>(env, {
    name: 'smarter.apps.llmclient.tasks.create_llmclient_request.create_llmclient_request',
    params: z.strictObject({ llmclient_id: pk(), request_data: z.record(z.string(), z.unknown()) }),
    async run(p, ctx) {
      const { db } = ctx.deps;
      if (!(await exists(db, 'llmclient_llmclient', p.llmclient_id))) {
        throw new DoesNotExist(
          'llmclient.models.LLMClient',
          `LLMClient matching query does not exist (id=${p.llmclient_id})`,
        );
      }
      const key = p.request_data[SESSION_KEY_NAME];
      await insertModel(db, 'llmclient_llmclientrequests', {
        llmclient_id: p.llmclient_id,
        request: djangoJson(p.request_data),
        session_key: typeof key === 'string' ? key.slice(0, 255) : null,
        is_aggregation: 0,
      });
      return null;
    },
  });
