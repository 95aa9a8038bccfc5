/**
 * Smarter's llmhost infrastructure tasks (`smarter/apps/llmhost/tasks/__init__.py`), all on the infrastructure
 * queue without autoretry (bare `@app.task(queue=…)`): a failure is a FAILURE, and Beat's periodic
 * `refresh_llmhost_status` / `reconcile_llmhost_computes` are what try again.
 */
import { z } from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../deps.js';
import { TASK as INFRA_TASK } from '../infrastructure/names.js';
import { copyApiARecord } from '../infrastructure/dns.js';
import type { InfraDeps } from '../infrastructure/env.js';
import { type ComputeState, reconcileCompute, settled } from './compute.js';
import { DEPLOYED_STATUSES, RECONCILE_INTERVAL_SECONDS, RECONCILE_MAX_ATTEMPTS } from './const.js';
import type { LlmhostEnv } from './env.js';
import { computesInUse, findCompute, findLlmhost, llmhostsWithStatus } from './rows.js';
import { destroy, launch, managedHostname, observe } from './service.js';

export const LLMHOST_TASK = {
  launch: 'smarter.apps.llmhost.tasks.launch_llmhost',
  destroy: 'smarter.apps.llmhost.tasks.destroy_llmhost',
  refresh: 'smarter.apps.llmhost.tasks.refresh_llmhost_status',
  reconcile: 'smarter.apps.llmhost.tasks.reconcile_llmhost_compute',
  reconcileAll: 'smarter.apps.llmhost.tasks.reconcile_llmhost_computes',
} as const;

export const launchLlmhost = (env: LlmhostEnv) =>
  defineTask<{ llmhost_id: number }, string | null, InfraDeps>({
    name: LLMHOST_TASK.launch,
    queue: env.queue,
    params: z.strictObject({ llmhost_id: pk() }),
    async run(p, ctx) {
      const host = await findLlmhost(ctx.deps.db, p.llmhost_id);
      if (!host) {
        ctx.logger.warn(`launch_llmhost() LLMHost ${p.llmhost_id} does not exist.`);
        return null;
      }
      const status = await launch(ctx.deps, env, host, (m) => ctx.logger.info(m));
      const hostname = managedHostname(env, host);
      if (hostname && env.settings.createDnsRecord) {
        // As Smarter: a DNS failure is logged, and the launch stands.
        try {
          await copyApiARecord(ctx.deps.cloud, { hostname, apiDomain: env.apiDomain, ttl: env.settings.defaultTtl });
          ctx.logger.info(`created the DNS record ${hostname} for ${host.name}`);
        } catch (err) {
          ctx.logger.error(`failed to create the DNS record ${hostname} for ${host.name}: ${(err as Error).message}`);
        }
      }
      if (host.computeId !== null) await ctx.applyAsync(LLMHOST_TASK.reconcile, [host.computeId], {}, { countdown: env.wait(RECONCILE_INTERVAL_SECONDS), queue: env.queue });
      return status;
    },
  });

export const destroyLlmhost = (env: LlmhostEnv) =>
  defineTask<{ llmhost_id: number; purge: boolean }, string | null, InfraDeps>({
    name: LLMHOST_TASK.destroy,
    queue: env.queue,
    params: z.strictObject({ llmhost_id: pk(), purge: z.boolean().default(false) }),
    async run(p, ctx) {
      const host = await findLlmhost(ctx.deps.db, p.llmhost_id);
      if (!host) {
        ctx.logger.warn(`destroy_llmhost() LLMHost ${p.llmhost_id} does not exist.`);
        return null;
      }
      const status = await destroy(ctx.deps, env, host, p.purge, (m) => ctx.logger.info(m));
      const hostname = managedHostname(env, host);
      if (hostname && env.settings.createDnsRecord) {
        await ctx.applyAsync(INFRA_TASK.destroyDomainARecord, [], { hostname, api_host_domain: env.apiDomain }, { queue: env.queue });
      }
      // A node still starting when the LLMHost was destroyed is removed once it joins.
      if (host.computeId !== null) await ctx.applyAsync(LLMHOST_TASK.reconcile, [host.computeId], {}, { countdown: env.wait(RECONCILE_INTERVAL_SECONDS), queue: env.queue });
      return status;
    },
  });

export const refreshLlmhostStatus = (env: LlmhostEnv) =>
  defineTask<{ llmhost_id: number | null }, Record<string, string>, InfraDeps>({
    name: LLMHOST_TASK.refresh,
    queue: env.queue,
    params: z.strictObject({ llmhost_id: pk().nullable().default(null) }),
    async run(p, ctx) {
      const hosts = p.llmhost_id !== null ? [await findLlmhost(ctx.deps.db, p.llmhost_id)].filter((h) => h !== null) : await llmhostsWithStatus(ctx.deps.db, DEPLOYED_STATUSES);
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

export const reconcileLlmhostCompute = (env: LlmhostEnv) =>
  defineTask<{ compute_id: number; attempt: number }, ComputeState | null, InfraDeps>({
    name: LLMHOST_TASK.reconcile,
    queue: env.queue,
    // Attempts count from 1, so the 60th run is attempt 60; the task stops itself there (no FAILURE).
    checks: { maxAttempts: RECONCILE_MAX_ATTEMPTS + 1, positional: true },
    params: z.strictObject({ compute_id: pk(), attempt: z.number().int().min(1).default(1) }),
    argNames: ['compute_id', 'attempt'],
    async run(p, ctx) {
      const c = await findCompute(ctx.deps.db, p.compute_id);
      if (!c) {
        ctx.logger.warn(`reconcile_llmhost_compute() LLMHostCompute ${p.compute_id} does not exist.`);
        return null;
      }
      let state: ComputeState | null = null;
      try {
        state = await reconcileCompute(ctx.deps, env, c, (m) => ctx.logger.info(m));
      } catch (err) {
        ctx.logger.error(`reconcile_llmhost_compute() failed for ${c.name}: ${(err as Error).message}`);
      }
      for (const host of await llmhostsWithStatus(ctx.deps.db, DEPLOYED_STATUSES, c.id)) {
        try {
          await observe(ctx.deps, env, host);
        } catch (err) {
          ctx.logger.error(`reconcile_llmhost_compute() status check of ${host.name} failed: ${(err as Error).message}`);
        }
      }
      if ((state === null || !settled(state)) && p.attempt < RECONCILE_MAX_ATTEMPTS) {
        // Re-queued as Smarter does, (compute_id, attempt + 1) positionally; this run still returns the state.
        await ctx.checkAgain({ after: env.wait(RECONCILE_INTERVAL_SECONDS) });
      } else if (state === null || !settled(state)) {
        ctx.logger.warn(`reconcile_llmhost_compute() ${c.name} is not settled after ${RECONCILE_MAX_ATTEMPTS} attempts; Beat's reconcile_llmhost_computes takes over.`);
      }
      return state;
    },
  });

export const reconcileLlmhostComputes = (env: LlmhostEnv) =>
  defineTask<Record<string, never>, Record<string, string>, InfraDeps>({
    name: LLMHOST_TASK.reconcileAll,
    queue: env.queue,
    params: z.strictObject({}),
    async run(_p, ctx) {
      const out: Record<string, string> = {};
      for (const c of await computesInUse(ctx.deps.db, DEPLOYED_STATUSES)) {
        try {
          out[c.name] = (await reconcileCompute(ctx.deps, env, c, (m) => ctx.logger.info(m))).message;
        } catch (err) {
          ctx.logger.error(`reconcile_llmhost_computes() failed for ${c.name}: ${(err as Error).message}`);
          out[c.name] = (err as Error).message;
        }
      }
      return out;
    },
  });
