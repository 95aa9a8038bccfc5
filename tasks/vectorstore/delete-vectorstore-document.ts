/**
 * `delete_vectorstore_document(document_id)`: removes the document's chunks from its (ready) database, then the
 * document row. False when there is no such document. A failure of the database is the task's FAILURE, and
 * the row stays `deleting`, so `maintain_vectorstores` queues it again.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { serviceDeps } from './env.js';
import { deleteDocumentRow, findDocument, findVectorstore } from './rows.js';
import { VectorstoreService } from './service.js';

export const deleteVectorstoreDocument = (env: TaskEnv) =>
  defineTask<{ document_id: number }, boolean, SmarterDeps>({
    name: 'smarter.apps.vectorstore.tasks.delete_vectorstore_document',
    queue: env.operationalQueue,
    params: z.strictObject({ document_id: pk() }),
    async run(p, ctx) {
      const document = await findDocument(ctx.deps.db, p.document_id);
      if (!document) return false;
      const vectorstore = await findVectorstore(ctx.deps.db, document.vectorstoreId);
      // ON DELETE CASCADE makes this unreachable in Django; a row left by hand is still removed.
      if (!vectorstore) await deleteDocumentRow(ctx.deps.db, document.id);
      else await new VectorstoreService(vectorstore, serviceDeps(env, ctx)).deleteDocument(document);
      return true;
    },
  });
