/**
 * `destroy_llmhost(llmhost_id, purge=False)` → status: delete the LLMHost's Kubernetes resources (the model volume
 * only when purged or not retained), queue `destroy_domain_A_record.delay(hostname=…, api_host_domain=…)` for a hostname
 * Smarter chose, and reconcile its compute in 30 s, so a node still starting is removed once it joins.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { findLlmhost } from './rows.js';
import { destroy, managedHostname } from './service.js';
import { destroyDomainARecord } from '../llmclient/index.js';
import { reconcileComputeSoon, reconcileLlmhostCompute } from './reconcile-llmhost-compute.js';

export const destroyLlmhost = (env: TaskEnv) => {
  // Referred to by their definitions: the names are the ones the tasks declare.
  const destroyRecord = destroyDomainARecord(env);
  const reconcile = reconcileLlmhostCompute(env);
  return defineTask<{ llmhost_id: number; purge: boolean }, string | null, SmarterDeps>({
    name: 'smarter.apps.llmhost.tasks.destroy_llmhost',
    queue: env.infrastructureQueue,
    params: z.strictObject({ llmhost_id: pk(), purge: z.boolean().default(false) }),
    async run(p, ctx) {
      const host = await findLlmhost(ctx.deps.db, p.llmhost_id);
      if (!host) {
        ctx.logger.warn(`destroy_llmhost() LLMHost ${p.llmhost_id} does not exist.`);
        return null;
      }
      const status = await destroy(ctx.deps, env, host, p.purge, (m) => ctx.logger.info(m));
      const hostname = managedHostname(env, host);
      // As Smarter: only when the cloud's DNS is ready (`infrastructure.dns.ready`, tasks/cloud/readiness.ts).
      if (hostname && env.settings.createDnsRecord && (await ctx.deps.cloud.readiness.dns())) {
        await ctx.applyAsync(
          destroyRecord.name,
          [],
          { hostname, api_host_domain: env.apiDomain },
          { queue: env.infrastructureQueue },
        );
      }
      await reconcileComputeSoon(ctx, env, reconcile, host.computeId);
      return status;
    },
  });
};
