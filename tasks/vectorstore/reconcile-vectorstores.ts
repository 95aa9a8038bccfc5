/**
 * `reconcile_vectorstores()` (Beat, every 5 minutes): brings every deployed vectorstore to ready (a self-hosted
 * server's collection is created once its StatefulSet is ready) and records status and statistics. Returns each
 * one's status by `str(vectorstore)`. A Pinecone vectorstore is not touched: its entry says that this worker does
 * not implement Pinecone, and its row keeps the status it had.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps } from '../deps.js';
import { type VectorstoreEnv, serviceDeps } from './env.js';
import { BackendNotImplemented } from './errors.js';
import { TASK } from './names.js';
import { deployedVectorstores, describe } from './rows.js';
import { VectorstoreService } from './service.js';

export const reconcileVectorstores = (env: VectorstoreEnv) =>
  defineTask<Record<string, never>, Record<string, string>, SmarterDeps>({
    name: TASK.reconcile,
    queue: env.infrastructureQueue,
    params: z.strictObject({}),
    async run(_p, ctx) {
      const out: Record<string, string> = {};
      for (const v of await deployedVectorstores(ctx.deps.db)) {
        if (v.backend !== 'qdrant') {
          const err = new BackendNotImplemented(v.name, v.backend);
          ctx.logger.warn('reconcile_vectorstores skipped', { vectorstore: describe(v), error: err.message });
          out[describe(v)] = `${v.status}: not reconciled: ${err.message}`;
          continue;
        }
        out[describe(v)] = await new VectorstoreService(v, serviceDeps(env, ctx)).reconcile();
      }
      return out;
    },
  });
