/**
 * Smarter's five vectorstore tasks on a real MariaDB with Smarter's tables, through the real Qdrant client
 * (@qdrant/js-client-rest) against the Qdrant stand-in, Pinecone's official client against the Pinecone stand-in,
 * and the real embeddings adapter (fetch) against the OpenAI-compatible stand-in; Kubernetes (a self-hosted server's
 * StatefulSet) from the in-memory FakeCloud. Every vectorstore's keys are its own, as Smarter stores them:
 * Fernet-encrypted Secrets of its ApiConnection, of its Provider, or generated for a self-hosted server
 * (smarter/apps/vectorstore/backends/qdrant.py, backends/pinecone.py, embeddings.py). This file:
 * delete_vectorstore_document, snapshot_vectorstore and maintain_vectorstores.
 */
import { CloudError } from '../../tasks/cloud/errors.js';
import { deleteVectorstoreDocument } from '../../tasks/vectorstore/delete-vectorstore-document.js';
import { loadVectorstoreDocument } from '../../tasks/vectorstore/load-vectorstore-document.js';
import { maintainVectorstores } from '../../tasks/vectorstore/maintain-vectorstores.js';
import { snapshotVectorstore } from '../../tasks/vectorstore/snapshot-vectorstore.js';
import { nameOf } from '../support/task-names.js';
import { OP, t, qdrant, pinecone, applied, closedUrl, apiConnection } from '../support/vectorstore-world.js';
import { vectorstoreWorldForFile, run, vectorstore, documentRow, vsRow, docRow } from '../support/vectorstore-world.js';
import { points, records, words } from '../support/vectorstore-world.js';

vectorstoreWorldForFile();

describe('own wiring: delete_vectorstore_document', () => {
  test("removes the document's chunks (only its own) and then its row; True", async () => {
    const v = await vectorstore({ spec: { embeddings: { chunkSize: 50, chunkOverlap: 5 } } });
    const gone = await documentRow(v.id, words(30, 'g'));
    const kept = await documentRow(v.id, words(10, 'k'));
    await run(nameOf(loadVectorstoreDocument), [gone]);
    await run(nameOf(loadVectorstoreDocument), [kept]);
    const keptCount = Number((await docRow(kept))?.chunk_count);
    expect(keptCount).toBeGreaterThan(0);
    expect(points(v.collection).length).toBeGreaterThan(keptCount);
    await t.db.execute("UPDATE vectorstore_vectorstoredocument SET status = 'deleting' WHERE id = ?", [gone]);
    expect(await run(nameOf(deleteVectorstoreDocument), [gone])).toBe(true);
    expect(await docRow(gone)).toBeUndefined();
    expect(points(v.collection).map((p) => (p.payload.metadata as { document_id: number }).document_id)).toEqual(
      Array(keptCount).fill(kept),
    );
  });

  test("a Pinecone document's chunks are deleted by their ids (only its own), then its row; True", async () => {
    const v = await vectorstore({ backend: 'pinecone', spec: { embeddings: { chunkSize: 50, chunkOverlap: 5 } } });
    const gone = await documentRow(v.id, words(30, 'g'));
    const kept = await documentRow(v.id, words(10, 'k'));
    await run(nameOf(loadVectorstoreDocument), [gone]);
    await run(nameOf(loadVectorstoreDocument), [kept]);
    const keptCount = Number((await docRow(kept))?.chunk_count);
    await t.db.execute("UPDATE vectorstore_vectorstoredocument SET status = 'deleting' WHERE id = ?", [gone]);
    expect(await run(nameOf(deleteVectorstoreDocument), [gone])).toBe(true);
    expect(await docRow(gone)).toBeUndefined();
    expect(records(v.collection).map((r) => r.metadata?.document_id)).toEqual(Array(keptCount).fill(kept));
    expect(pinecone.requests.filter((r) => r === `${v.collection}: POST /vectors/delete`)).toHaveLength(1);
  });

  test('no such document: False', async () => {
    expect(await run(nameOf(deleteVectorstoreDocument), [987654321])).toBe(false);
  });

  test('a vectorstore that is not ready: the row is deleted without calling Qdrant', async () => {
    const v = await vectorstore({ status: 'stopped', endpoint: closedUrl });
    const id = await documentRow(v.id, 'x', { status: 'deleting' });
    expect(await run(nameOf(deleteVectorstoreDocument), [id])).toBe(true);
    expect(await docRow(id)).toBeUndefined();
  });

  test("Qdrant failing is the task's failure (a CloudError naming verb and collection), and the row stays deleting", async () => {
    const v = await vectorstore();
    const id = await documentRow(v.id, 'x', { status: 'deleting' });
    qdrant.failNext({ status: 503, path: /points\/delete/, message: 'Service unavailable: shutting down' });
    const err = await run(nameOf(deleteVectorstoreDocument), [id]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudError);
    expect((err as Error).message).toBe(
      `vectordb delete points ${v.collection}: Unavailable: Service unavailable: shutting down`,
    );
    expect((await docRow(id))?.status).toBe('deleting');
  });
});

describe('own wiring: snapshot_vectorstore', () => {
  const snapshotRows = async (id: number) =>
    t.db.select(
      'SELECT name, status, status_message, size_bytes, vector_count, scheduled FROM vectorstore_vectorstoresnapshot WHERE vectorstore_id = ? ORDER BY created_at DESC, id DESC',
      [id],
    );

  async function olderSnapshot(
    v: { id: number; collection: string },
    name: string,
    hoursAgo: number,
    status = 'ready',
  ): Promise<void> {
    await t.db.execute(
      `INSERT INTO vectorstore_vectorstoresnapshot (vectorstore_id, name, status, status_message, scheduled, created_at, updated_at) VALUES (?, ?, ?, '', 1, UTC_TIMESTAMP(6) - INTERVAL ? HOUR, UTC_TIMESTAMP(6))`,
      [v.id, name, status, hoursAgo],
    );
    if (status !== 'failed') {
      qdrant.collections
        .get(v.collection)
        ?.snapshots.push({ name, creation_time: '2026-01-01T00:00:00', size: 10, checksum: 'x' });
    }
  }

  test("takes a snapshot named as Qdrant names it, records it, and prunes the oldest beyond the manifest's retention", async () => {
    const v = await vectorstore({ spec: { maintenance: { snapshotRetention: 2 } } });
    await olderSnapshot(v, 'old-3.snapshot', 30);
    await olderSnapshot(v, 'old-2.snapshot', 20);
    await olderSnapshot(v, 'old-1.snapshot', 10);
    await olderSnapshot(v, 'broken.snapshot', 5, 'failed');
    const name = String(await run(nameOf(snapshotVectorstore), [v.id]));
    expect(name).toMatch(new RegExp(`^${v.collection}-\\d+-\\d{4}-\\d\\d-\\d\\d-\\d\\d-\\d\\d-\\d\\d\\.snapshot$`));
    const kept = await snapshotRows(v.id);
    expect(kept.map((r) => r.name)).toEqual([name, 'old-1.snapshot']);
    expect(kept[0]).toMatchObject({ status: 'ready', status_message: '', scheduled: 0, vector_count: '0' });
    expect(Number(kept[0]?.size_bytes)).toBeGreaterThan(0);
    expect(
      qdrant.collections
        .get(v.collection)
        ?.snapshots.map((s) => s.name)
        .sort(),
    ).toEqual([name, 'old-1.snapshot'].sort());
    expect((await vsRow(v.id))?.last_snapshot_at).not.toBeNull();
  });

  test('the default retention is 7', async () => {
    const v = await vectorstore();
    for (let i = 9; i >= 1; i -= 1) await olderSnapshot(v, `s${i}.snapshot`, i);
    await run(nameOf(snapshotVectorstore), [v.id]);
    expect((await snapshotRows(v.id)).length).toBe(7);
    expect(qdrant.collections.get(v.collection)?.snapshots.length).toBe(7);
  });

  test('a snapshot Qdrant no longer has is skipped by the pruning, its row kept, the rest pruned', async () => {
    const v = await vectorstore({ spec: { maintenance: { snapshotRetention: 1 } } });
    await olderSnapshot(v, 'a.snapshot', 3);
    await t.db.execute(
      "INSERT INTO vectorstore_vectorstoresnapshot (vectorstore_id, name, status, status_message, scheduled, created_at, updated_at) VALUES (?, 'lost.snapshot', 'ready', '', 1, UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, UTC_TIMESTAMP(6))",
      [v.id],
    );
    qdrant.failNext({ status: 500, path: /DELETE .*lost\.snapshot/ });
    await run(nameOf(snapshotVectorstore), [v.id]);
    expect((await snapshotRows(v.id)).map((r) => r.name)).toContain('lost.snapshot');
    expect((await snapshotRows(v.id)).map((r) => r.name)).not.toContain('a.snapshot');
  });

  test('not ready is a VectorstoreServiceError; no such vectorstore is None; Qdrant failing marks the row failed', async () => {
    const p = await vectorstore({ status: 'provisioning' });
    await expect(run(nameOf(snapshotVectorstore), [p.id])).rejects.toMatchObject({
      pyType: 'VectorstoreServiceError',
      message: `Vectorstore ${p.name} is provisioning, not ready. Deploy it first.`,
    });
    expect(await run(nameOf(snapshotVectorstore), [987654321])).toBeNull();
    const v = await vectorstore();
    qdrant.failNext({
      status: 500,
      path: /POST .*\/snapshots/,
      message: 'Service internal error: No space left on device',
    });
    await expect(run(nameOf(snapshotVectorstore), [v.id])).rejects.toThrow(
      `vectordb create snapshot ${v.collection}: Unavailable: Service internal error: No space left on device`,
    );
    // the failed row is kept, saying why, until the next pruning removes it (as in Smarter)
    expect(await snapshotRows(v.id)).toMatchObject([
      {
        status: 'failed',
        status_message: `vectordb create snapshot ${v.collection}: Unavailable: Service internal error: No space left on device`,
      },
    ]);
    await run(nameOf(snapshotVectorstore), [v.id]);
    expect((await snapshotRows(v.id)).map((r) => r.status)).toEqual(['ready']);
  });
});

describe('own wiring: snapshot_vectorstore for Pinecone', () => {
  const snapshotRows = async (id: number) =>
    t.db.select(
      'SELECT name, status, status_message, size_bytes FROM vectorstore_vectorstoresnapshot WHERE vectorstore_id = ? ORDER BY created_at DESC, id DESC',
      [id],
    );

  test("a Pinecone backup: asked for with Smarter's name and description, recorded by its backup_id and size; creating until Pinecone says ready", async () => {
    const v = await vectorstore({ backend: 'pinecone' });
    const id = String(await run(nameOf(snapshotVectorstore), [v.id]));
    const backup = pinecone.backups.get(id);
    expect(backup?.name).toMatch(new RegExp(`^${v.collection}-\\d{8}-\\d{6}$`));
    expect(backup?.description).toBe('smarter backup');
    expect(await snapshotRows(v.id)).toMatchObject([
      { name: id, status: 'ready', status_message: '', size_bytes: String(backup?.size_bytes) },
    ]);
    pinecone.backupStatus = 'Initializing';
    try {
      const later = String(await run(nameOf(snapshotVectorstore), [v.id]));
      expect((await snapshotRows(v.id))[0]).toMatchObject({ name: later, status: 'creating' });
    } finally {
      pinecone.backupStatus = 'Ready';
    }
  });

  test("Pinecone refusing a backup (the Starter plan) fails the task in Smarter's words, and the row says why", async () => {
    const v = await vectorstore({ backend: 'pinecone' });
    pinecone.failNext({ status: 403, path: /backups/, message: 'Backups are not available on the Starter plan' });
    await expect(run(nameOf(snapshotVectorstore), [v.id])).rejects.toMatchObject({
      pyType: 'VectorStoreBackendError',
      message: `Pinecone did not back up ${v.collection}: pinecone create backup ${v.collection}: Invalid: Backups are not available on the Starter plan`,
    });
    expect(await snapshotRows(v.id)).toMatchObject([
      {
        status: 'failed',
        status_message: `Pinecone did not back up ${v.collection}: pinecone create backup ${v.collection}: Invalid: Backups are not available on the Starter plan`,
      },
    ]);
  });
});

describe('own wiring: maintain_vectorstores', () => {
  test('snapshots when due, prunes, and queues lost documents again: deleting → delete, pending/loading → load', async () => {
    const v = await vectorstore();
    const pending = await documentRow(v.id, 'a', { status: 'pending', minutesAgo: 31 });
    const loading = await documentRow(v.id, 'b', { status: 'loading', minutesAgo: 45 });
    const deleting = await documentRow(v.id, 'c', { status: 'deleting', minutesAgo: 60 });
    await documentRow(v.id, 'd', { status: 'pending', minutesAgo: 5 });
    await documentRow(v.id, 'e', { status: 'loaded', minutesAgo: 600 });
    const out = (await run(nameOf(maintainVectorstores))) as Record<
      string,
      { status: string; snapshot: string | null; pruned: number; retry: number[] }
    >;
    const entry = out[`${v.name} (qdrant, managed)`];
    expect(entry).toMatchObject({ status: 'ready', pruned: 0, retry: [pending, loading, deleting] });
    expect(entry?.snapshot).toMatch(new RegExp(`^${v.collection}-`));
    const [snap] = await t.db.select('SELECT scheduled FROM vectorstore_vectorstoresnapshot WHERE vectorstore_id = ?', [
      v.id,
    ]);
    expect(snap?.scheduled).toBe(1);
    expect(applied).toEqual([
      { task: nameOf(loadVectorstoreDocument), args: [pending], queue: OP },
      { task: nameOf(loadVectorstoreDocument), args: [loading], queue: OP },
      { task: nameOf(deleteVectorstoreDocument), args: [deleting], queue: OP },
    ]);
    expect((await vsRow(v.id))?.last_maintenance_at).not.toBeNull();
  });

  test('no snapshot before snapshotIntervalHours have passed, nor when snapshots are off', async () => {
    const recent = await vectorstore({ lastSnapshotHoursAgo: 23 });
    const off = await vectorstore({ spec: { maintenance: { snapshots: false } } });
    const due = await vectorstore({ lastSnapshotHoursAgo: 3, spec: { maintenance: { snapshotIntervalHours: 2 } } });
    const out = (await run(nameOf(maintainVectorstores))) as Record<string, { snapshot: string | null }>;
    expect(out[`${recent.name} (qdrant, managed)`]?.snapshot).toBeNull();
    expect(out[`${off.name} (qdrant, managed)`]?.snapshot).toBeNull();
    expect(out[`${due.name} (qdrant, managed)`]?.snapshot).toMatch(/\.snapshot$/);
  });

  test('a vectorstore that turns out unreachable is recorded failed and not snapshotted; the others are maintained', async () => {
    const down = await vectorstore({ connection: await apiConnection(closedUrl, 'qdrant-key') });
    const ok = await vectorstore();
    const out = (await run(nameOf(maintainVectorstores))) as Record<string, Record<string, unknown>>;
    expect(out[`${down.name} (qdrant, managed)`]).toMatchObject({ status: 'failed', snapshot: null, retry: [] });
    expect(out[`${ok.name} (qdrant, managed)`]).toMatchObject({ status: 'ready' });
  });

  test('a Pinecone vectorstore is maintained as Smarter does: reconciled, backed up when due, pruned, lost documents queued again', async () => {
    const v = await vectorstore({ backend: 'pinecone', spec: { maintenance: { snapshotRetention: 1 } } });
    const lost = await documentRow(v.id, 'lost', { status: 'pending', minutesAgo: 40 });
    const first = (await run(nameOf(maintainVectorstores))) as Record<
      string,
      { status: string; snapshot: string | null; pruned: number; retry: number[] }
    >;
    const entry = first[`${v.name} (pinecone, managed)`];
    expect(entry).toMatchObject({ status: 'ready', pruned: 0, retry: [lost] });
    expect(pinecone.backups.get(String(entry?.snapshot))).toMatchObject({
      source_index_name: v.collection,
      description: 'smarter backup',
    });
    expect(applied).toEqual([{ task: nameOf(loadVectorstoreDocument), args: [lost], queue: OP }]);
    await t.db.execute(
      'UPDATE vectorstore_vectorstoremeta SET last_snapshot_at = UTC_TIMESTAMP(6) - INTERVAL 25 HOUR WHERE id = ?',
      [v.id],
    );
    await t.db.execute(
      'UPDATE vectorstore_vectorstoresnapshot SET created_at = created_at - INTERVAL 1 HOUR WHERE vectorstore_id = ?',
      [v.id],
    );
    const second = (await run(nameOf(maintainVectorstores))) as Record<
      string,
      { snapshot: string | null; pruned: number }
    >;
    expect(second[`${v.name} (pinecone, managed)`]?.pruned).toBe(1);
    expect(pinecone.backups.has(String(entry?.snapshot))).toBe(false);
    expect(pinecone.backups.has(String(second[`${v.name} (pinecone, managed)`]?.snapshot))).toBe(true);
  });
});
