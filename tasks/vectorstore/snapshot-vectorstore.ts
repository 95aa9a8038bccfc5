/**
 * `snapshot_vectorstore(vectorstore_id)`: takes a snapshot on request (`scheduled` false), then prunes to the
 * manifest's `spec.maintenance.snapshotRetention` (7). Returns the snapshot's name as the database named it (a
 * Qdrant snapshot's name, a Pinecone backup's `backup_id`), or None when there is no such vectorstore. Not ready,
 * or the database failing, is the task's FAILURE.
 */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import { pk } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { serviceDeps } from './env.js';
import { findVectorstore } from './rows.js';
import { VectorstoreService } from './service.js';

export const snapshotVectorstore = (env: TaskEnv) =>
  defineTask<{ vectorstore_id: number }, string | null, SmarterDeps>({
    name: 'smarter.apps.vectorstore.tasks.snapshot_vectorstore',
    queue: env.infrastructureQueue,
    params: z.strictObject({ vectorstore_id: pk() }),
    async run(p, ctx) {
      const vectorstore = await findVectorstore(ctx.deps.db, p.vectorstore_id);
      if (!vectorstore) return null;
      const service = new VectorstoreService(vectorstore, serviceDeps(env, ctx));
      const name = await service.snapshot(false);
      await service.pruneSnapshots();
      return name;
    },
  });
