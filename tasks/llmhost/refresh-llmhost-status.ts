/**
 * `refresh_llmhost_status(llmhost_id=None)` → `{name: status}`: observe one LLMHost, or every deployed one (Beat,
 * every 5 min), probing the health of active ones. A failure of one is logged and leaves it out; a cluster that
 * does not answer is one warning and `{}`, as Smarter's `if not service.cluster.ready`.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { DEPLOYED_STATUSES } from './const.js';
import { findLlmhost, llmhostsWithStatus } from './rows.js';
import { clusterReady, observe } from './service.js';

export const refreshLlmhostStatus = (env: TaskEnv) =>
  defineTask<{ llmhost_id: number | null }, Record<string, string>, SmarterDeps>({
    name: 'smarter.apps.llmhost.tasks.refresh_llmhost_status',
    queue: env.infrastructureQueue,
    params: z.strictObject({ llmhost_id: pk().nullable().default(null) }),
    async run(p, ctx) {
      const hosts =
        p.llmhost_id !== null
          ? [await findLlmhost(ctx.deps.db, p.llmhost_id)].filter((h) => h !== null)
          : await llmhostsWithStatus(ctx.deps.db, DEPLOYED_STATUSES);
      if (!(await clusterReady(ctx.deps, env))) {
        ctx.logger.warn('refresh_llmhost_status() the Kubernetes cluster is not available.');
        return {};
      }
      const out: Record<string, string> = {};
      for (const host of hosts) {
        try {
          out[host.name] = await observe(ctx.deps, env, host);
        } catch (err) {
          ctx.logger.error(`refresh_llmhost_status() failed for ${host.name}: ${(err as Error).message}`);
        }
      }
      return out;
    },
  });
