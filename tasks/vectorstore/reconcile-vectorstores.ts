/**
 * `reconcile_vectorstores()` (Beat, every 5 minutes): brings every deployed vectorstore to ready (a self-hosted
 * server's collection is created once its StatefulSet is ready) and records status and statistics. Returns each
 * one's status by `str(vectorstore)`. A Pinecone index is created once Pinecone answers, and ready once Pinecone
 * has initialized it. A failure (unreachable, refused key, no ApiConnection) is the row's `failed` and its message.
 */
import { periodicTask } from '../env/periodic-task.js';
import type { TaskEnv } from '../env/task-env.js';
import { serviceDeps } from './env.js';
import { deployedVectorstores, describe } from './rows.js';
import { VectorstoreService } from './service.js';

export const reconcileVectorstores = (env: TaskEnv) =>
  periodicTask<Record<string, string>>({
    name: 'smarter.apps.vectorstore.tasks.reconcile_vectorstores',
    queue: env.infrastructureQueue,
    async run(ctx) {
      const out: Record<string, string> = {};
      for (const v of await deployedVectorstores(ctx.deps.db)) {
        out[describe(v)] = await new VectorstoreService(v, serviceDeps(env, ctx)).reconcile();
      }
      return out;
    },
  });
