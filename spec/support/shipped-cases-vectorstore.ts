/**
 * The shipped suite's cases (spec/shipped/smarter-tasks.test.ts) for the vectorstore names, each vectorstore with
 * its own server, key and collection.
 */
import { waitFor } from './wait.js';
import { OP, P, w, python, vsA, vsB, vsP, pineconeIndex, documentRow } from './shipped-suite.js';
import { type Case, pointsOf, docRow, TEXT, shared } from './shipped-case-helpers.js';

export const VECTORSTORE_CASES: Case[] = [
  // vectorstore/tasks.py: each vectorstore's own server, key and collection.
  {
    task: 'vectorstore.tasks.load_vectorstore_document',
    phase: 1,
    prepare: async () => {
      const docA = await documentRow(vsA.id, TEXT);
      const docB = await documentRow(vsB.id, TEXT);
      const docP = await documentRow(vsP.id, TEXT);
      shared.docToDelete = await documentRow(
        vsA.id,
        'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(3),
      );
      // The other three documents are sent as Smarter's views send them too, beside this one.
      await python(
        [docB, docP, shared.docToDelete].map((d) => ({
          key: String(d),
          name: `${P}vectorstore.tasks.load_vectorstore_document`,
          queue: OP,
          args: [d],
        })),
      );
      return {
        args: [docA],
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBeGreaterThan(1);
          for (const d of [docA, docB, docP, shared.docToDelete ?? 0]) {
            await waitFor(async () => (await docRow(d))?.status === 'loaded', 30_000, 200);
          }
          expect(pointsOf(docA)).toHaveLength(Number(m.result));
          expect([...(w.qdrant.collections.get('handbook-a')?.points.keys() ?? [])].length).toBeGreaterThan(1);
          // No index_name: the collection Smarter's default_index_name() gives, on that vectorstore's own server.
          expect(pointsOf(docB, w.qdrantB).length).toBeGreaterThan(1);
          expect(pointsOf(docB)).toHaveLength(0);
          const records = [...(w.pinecone.indexes.get(pineconeIndex)?.namespaces.get('')?.values() ?? [])];
          expect(records.length).toBeGreaterThan(1);
        },
      };
    },
  },
  {
    task: 'vectorstore.tasks.delete_vectorstore_document',
    phase: 2,
    prepare: async () => {
      const doc = shared.docToDelete ?? 0;
      const before = pointsOf(doc).length;
      return {
        args: [doc],
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe(true);
          expect(before).toBeGreaterThan(0);
          expect(pointsOf(doc)).toHaveLength(0);
          expect(await docRow(doc)).toBeUndefined();
        },
      };
    },
  },
  {
    task: 'vectorstore.tasks.snapshot_vectorstore',
    phase: 2,
    prepare: async () => ({
      args: [vsA.id],
      state: 'SUCCESS',
      check: async (m) => {
        expect(String(m.result)).toMatch(/^handbook-a-/);
        expect(w.qdrant.collections.get('handbook-a')?.snapshots.map((s) => s.name)).toContain(m.result);
      },
    }),
  },
  {
    task: 'vectorstore.tasks.reconcile_vectorstores',
    phase: 1,
    prepare: async () => ({
      state: 'SUCCESS',
      check: async (m) => {
        expect(m.result).toMatchObject({
          [`${vsA.name} (qdrant, managed)`]: 'ready',
          [`${vsB.name} (qdrant, managed)`]: 'ready',
          [`${vsP.name} (pinecone, managed)`]: 'ready',
        });
      },
    }),
  },
  {
    // A document left pending half an hour ago is queued again, and loaded by the operational worker.
    task: 'vectorstore.tasks.maintain_vectorstores',
    phase: 2,
    prepare: async () => {
      const lost = await documentRow(vsA.id, TEXT, 'pending', 31);
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(JSON.stringify(m.result)).toContain(String(lost));
          await waitFor(async () => (await docRow(lost))?.status === 'loaded', 30_000, 200);
        },
      };
    },
  },
];
