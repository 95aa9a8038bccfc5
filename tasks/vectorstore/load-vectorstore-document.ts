/**
 * `load_vectorstore_document(document_id)`: split, embed and load a document. Returns the number of chunks, or
 * None when the document does not exist or failed to load: as in Smarter, a failure is logged and recorded on
 * the document (`failed`, with the reason in `status_message`), and the task itself succeeds.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { messageOf } from '../cloud/call.js';
import { pk } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { serviceDeps } from './env.js';
import { describeDocument, findDocument, findVectorstore } from './rows.js';
import { VectorstoreService } from './service.js';

export const loadVectorstoreDocument = (env: TaskEnv) =>
  defineTask<{ document_id: number }, number | null, SmarterDeps>({
    name: 'smarter.apps.vectorstore.tasks.load_vectorstore_document',
    queue: env.operationalQueue,
    params: z.strictObject({ document_id: pk() }),
    async run(p, ctx) {
      const document = await findDocument(ctx.deps.db, p.document_id);
      const vectorstore = document ? await findVectorstore(ctx.deps.db, document.vectorstoreId) : null;
      if (!document || !vectorstore) return null;
      try {
        return await new VectorstoreService(vectorstore, serviceDeps(env, ctx)).loadDocument(document);
      } catch (err) {
        ctx.logger.warn('load_vectorstore_document failed', {
          document: describeDocument(vectorstore, document),
          error: messageOf(err),
        });
        return null;
      }
    },
  });
