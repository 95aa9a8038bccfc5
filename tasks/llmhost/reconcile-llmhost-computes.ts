/**
 * `reconcile_llmhost_computes()` → `{name: message}`: reconcile every compute with desired nodes or deployed
 * LLMHosts (Beat, every 5 min), so a node no longer needed is removed even if a reconcile failed.
 */
import { periodicTask } from '../env/periodic-task.js';
import type { TaskEnv } from '../env/task-env.js';
import { reconcileCompute } from './compute.js';
import { DEPLOYED_STATUSES } from './const.js';
import { computesInUse } from './rows.js';

export const reconcileLlmhostComputes = (env: TaskEnv) =>
  periodicTask<Record<string, string>>({
    name: 'smarter.apps.llmhost.tasks.reconcile_llmhost_computes',
    queue: env.infrastructureQueue,
    async run(ctx) {
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
