/**
 * `launch_llmhost(llmhost_id)` → status: launch the LLMHost (Kubernetes resources, node group), create the DNS A record
 * of a hostname Smarter chose (a failure is logged), then `reconcile_llmhost_compute.apply_async((compute_id,), countdown=30)`.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { copyApiARecord } from '../llmclient/index.js';
import { findLlmhost } from './rows.js';
import { launch, managedHostname } from './service.js';
import { reconcileComputeSoon, reconcileLlmhostCompute } from './reconcile-llmhost-compute.js';

export const launchLlmhost = (env: TaskEnv) => {
  // Referred to by its definition: the name is the one the task declares.
  const reconcile = reconcileLlmhostCompute(env);
  return defineTask<{ llmhost_id: number }, string | null, SmarterDeps>({
    name: 'smarter.apps.llmhost.tasks.launch_llmhost',
    queue: env.infrastructureQueue,
    params: z.strictObject({ llmhost_id: pk() }),
    async run(p, ctx) {
      const host = await findLlmhost(ctx.deps.db, p.llmhost_id);
      if (!host) {
        ctx.logger.warn(`launch_llmhost() LLMHost ${p.llmhost_id} does not exist.`);
        return null;
      }
      const status = await launch(ctx.deps, env, host, (m) => ctx.logger.info(m));
      const hostname = managedHostname(env, host);
      // Smarter's `dns_enabled()`: the setting, and the cloud's DNS ready (tasks/cloud/readiness.ts).
      if (hostname && env.settings.createDnsRecord && (await ctx.deps.cloud.readiness.dns())) {
        // As Smarter: a DNS failure is logged, and the launch stands.
        try {
          await copyApiARecord(ctx.deps.cloud, { hostname, apiDomain: env.apiDomain, ttl: env.settings.defaultTtl });
          ctx.logger.info(`created the DNS record ${hostname} for ${host.name}`);
        } catch (err) {
          ctx.logger.error(`failed to create the DNS record ${hostname} for ${host.name}: ${(err as Error).message}`);
        }
      }
      await reconcileComputeSoon(ctx, env, reconcile, host.computeId);
      return status;
    },
  });
};
