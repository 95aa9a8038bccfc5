/**
 * `maintain_vectorstores()` (Beat, hourly): for every ready, active vectorstore, reconcile, take a snapshot when
 * `spec.maintenance.snapshotIntervalHours` (24) has passed, prune to the retention, and queue again the documents
 * whose task was lost (pending, loading or deleting for 30 minutes): `delete_vectorstore_document.delay(pk)` for
 * a deleting one, `load_vectorstore_document.delay(pk)` for the others. One vectorstore's failure is its entry's
 * `{error}`, and the others are still maintained. A Pinecone vectorstore's snapshots are Pinecone backups.
 */
import { messageOf } from '../cloud/call.js';
import { periodicTask } from '../env/periodic-task.js';
import type { TaskEnv } from '../env/task-env.js';
import { serviceDeps } from './env.js';
import { DOC } from './const.js';
import { describe, readyVectorstores } from './rows.js';
import { VectorstoreService } from './service.js';
import { deleteVectorstoreDocument } from './delete-vectorstore-document.js';
import { loadVectorstoreDocument } from './load-vectorstore-document.js';

export const maintainVectorstores = (env: TaskEnv) => {
  // Referred to by their definitions: the names are the ones the tasks declare.
  const load = loadVectorstoreDocument(env);
  const remove = deleteVectorstoreDocument(env);
  return periodicTask<Record<string, unknown>>({
    name: 'smarter.apps.vectorstore.tasks.maintain_vectorstores',
    queue: env.infrastructureQueue,
    async run(ctx) {
      const out: Record<string, unknown> = {};
      for (const v of await readyVectorstores(ctx.deps.db)) {
        try {
          const { retryStatus, ...result } = await new VectorstoreService(v, serviceDeps(env, ctx)).maintain();
          for (const id of result.retry) {
            const task = retryStatus.get(id) === DOC.DELETING ? remove.name : load.name;
            await ctx.applyAsync(task, [id], {}, { queue: env.operationalQueue });
          }
          out[describe(v)] = result;
        } catch (err) {
          ctx.logger.error('maintain_vectorstores failed', { vectorstore: describe(v), error: messageOf(err) });
          out[describe(v)] = { error: messageOf(err) };
        }
      }
      return out;
    },
  });
};
