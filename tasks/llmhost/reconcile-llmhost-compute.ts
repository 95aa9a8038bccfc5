/**
 * `reconcile_llmhost_compute(compute_id, attempt=1)` → the compute's state: reconcile its node group, observe its
 * deployed LLMHosts, and while not settled re-queue `(compute_id, attempt + 1)` positionally every 30 s, up to
 * `RECONCILE_MAX_ATTEMPTS = 60` runs; then Beat's `reconcile_llmhost_computes` takes over (no FAILURE).
 */
import * as z from 'zod';
import type { TaskContext } from '../../lib/registry/context.js';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { CloudError } from '../cloud/errors.js';
import { type ComputeState, LLMHostComputeError, reconcileCompute, settled } from './compute.js';
import { DEPLOYED_STATUSES, RECONCILE_INTERVAL_SECONDS, RECONCILE_MAX_ATTEMPTS } from './const.js';
import { findCompute, llmhostsWithStatus } from './rows.js';
import { LLMHostClusterError, clusterReady, observe } from './service.js';
import { LLMHostConfigurationError } from './spec.js';

/**
 * What Smarter's task catches (`LLMHostComputeError`, `LLMHostServiceError`): the cloud's failures, which its
 * services raise as those. Anything else (the database, a bug) fails the task, as it does in Smarter.
 */
const cloudFailure = (err: unknown) =>
  err instanceof CloudError ||
  err instanceof LLMHostComputeError ||
  err instanceof LLMHostClusterError ||
  err instanceof LLMHostConfigurationError;

export const reconcileLlmhostCompute = (env: TaskEnv) =>
  defineTask<{ compute_id: number; attempt: number }, ComputeState | null, SmarterDeps>({
    name: 'smarter.apps.llmhost.tasks.reconcile_llmhost_compute',
    queue: env.infrastructureQueue,
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
        if (!cloudFailure(err)) throw err;
        ctx.logger.error(`reconcile_llmhost_compute() failed for ${c.name}: ${(err as Error).message}`);
      }
      // As Smarter's `if service.cluster.ready`: a cluster that does not answer is not asked about each LLMHost.
      const hosts = (await clusterReady(ctx.deps, env))
        ? await llmhostsWithStatus(ctx.deps.db, DEPLOYED_STATUSES, c.id)
        : [];
      for (const host of hosts) {
        try {
          await observe(ctx.deps, env, host, { probe: false });
        } catch (err) {
          if (!cloudFailure(err)) throw err;
          ctx.logger.error(
            `reconcile_llmhost_compute() status check of ${host.name} failed: ${(err as Error).message}`,
          );
        }
      }
      if ((state === null || !settled(state)) && p.attempt < RECONCILE_MAX_ATTEMPTS) {
        // Re-queued as Smarter does, (compute_id, attempt + 1) positionally; this run still returns the state.
        await ctx.checkAgain({ after: env.wait(RECONCILE_INTERVAL_SECONDS) });
      } else if (state === null || !settled(state)) {
        ctx.logger.warn(
          `reconcile_llmhost_compute() ${c.name} is not settled after ${RECONCILE_MAX_ATTEMPTS} attempts; Beat's reconcile_llmhost_computes takes over.`,
        );
      }
      return state;
    },
  });

/**
 * After a launch or a destroy: queue the reconcile of the LLMHost's compute, if it has one, in Smarter's interval,
 * so that a node still starting is seen (or removed) once it joins.
 */
export async function reconcileComputeSoon(
  ctx: TaskContext<SmarterDeps>,
  env: TaskEnv,
  reconcile: { name: string },
  computeId: number | null,
): Promise<void> {
  if (computeId === null) return;
  await ctx.applyAsync(
    reconcile.name,
    [computeId],
    {},
    { countdown: env.wait(RECONCILE_INTERVAL_SECONDS), queue: env.infrastructureQueue },
  );
}
