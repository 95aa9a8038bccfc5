/** Smarter's five vectorstore tasks (Smarter's `smarter/smarter/apps/vectorstore/tasks.py`): documents on the operational queue, databases on the infrastructure one; none autoretries. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { deleteVectorstoreDocument } from './delete-vectorstore-document.js';
import { loadVectorstoreDocument } from './load-vectorstore-document.js';
import { maintainVectorstores } from './maintain-vectorstores.js';
import { reconcileVectorstores } from './reconcile-vectorstores.js';
import { snapshotVectorstore } from './snapshot-vectorstore.js';

export function vectorstoreTasks(env: TaskEnv): AnyTask<SmarterDeps>[] {
  return [
    loadVectorstoreDocument(env),
    deleteVectorstoreDocument(env),
    snapshotVectorstore(env),
    reconcileVectorstores(env),
    maintainVectorstores(env),
  ];
}
