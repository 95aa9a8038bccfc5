/**
 * Smarter's `VectorstoreService` operations that its tasks call: reconcile, load and delete a document, snapshot
 * and prune, maintain. Same order of writes, same status strings and messages, so a row reads the same whichever
 * worker ran the task.
 */
import { messageOf } from '../cloud/call.js';
import type { Database } from '../db/database.js';
import { NOW } from '../db/django.js';
import { type BackendDeps, type Chunk, type VectorstoreBackend, indexName } from './backend.js';
import { chunkId, chunkIds } from './chunk-ids.js';
import { VectorstoreEmbeddings } from './embeddings.js';
import { SmarterConfigurationError, VectorstoreServiceError } from './errors.js';
import { DEFAULTS, DOC, PAGE_BREAK, SNAP, STUCK_AFTER_MINUTES, VS } from './const.js';
import * as rows from './rows.js';
import { embeddingsSpec, maintenanceSpec } from './spec.js';
import { RecursiveCharacterTextSplitter } from './splitter.js';

export interface ServiceDeps extends BackendDeps {
  db: Database;
}

/** `get_backend`: Qdrant or Pinecone by the row's `backend`. The modules are imported on first use, as the cloud clients are. */
export async function getBackend(
  v: rows.VectorstoreRow,
  deps: BackendDeps,
  embeddings: VectorstoreEmbeddings,
): Promise<VectorstoreBackend> {
  if (v.backend === 'qdrant') return new (await import('./qdrant.js')).QdrantBackend(v, deps, embeddings);
  if (v.backend === 'pinecone') return new (await import('./pinecone.js')).PineconeBackend(v, deps, embeddings);
  throw new SmarterConfigurationError(`Unsupported vectorstore backend: ${v.backend}`);
}

export interface MaintainResult {
  status: string;
  snapshot: string | null;
  pruned: number;
  retry: number[];
}

export class VectorstoreService {
  private made: Promise<VectorstoreBackend> | undefined;
  private readonly embeddings: VectorstoreEmbeddings;

  constructor(
    private vectorstore: rows.VectorstoreRow,
    private readonly deps: ServiceDeps,
  ) {
    this.embeddings = new VectorstoreEmbeddings(vectorstore, deps);
  }

  /** Built on first use, so an unsupported backend fails where Smarter's `get_backend` is first called. */
  backend(): Promise<VectorstoreBackend> {
    this.made ??= getBackend(this.vectorstore, this.deps, this.embeddings);
    return this.made;
  }

  private async setStatus(status: string, message = ''): Promise<void> {
    const previous = this.vectorstore.status;
    await rows.updateVectorstore(this.deps.db, this.vectorstore.id, { status, status_message: message });
    this.vectorstore = { ...this.vectorstore, status };
    if (previous !== status) {
      this.deps.logger.info('vectorstore status', {
        vectorstore: rows.describe(this.vectorstore),
        previous,
        status,
        message,
      });
    }
  }

  requireReady(): void {
    const v = this.vectorstore;
    if (v.status !== VS.READY || !v.isActive) {
      throw new VectorstoreServiceError(`Vectorstore ${v.name} is ${v.status}, not ready. Deploy it first.`);
    }
  }

  /** Bring a deployed database to ready; records status and statistics; never throws. */
  async reconcile(): Promise<string> {
    const v = this.vectorstore;
    if (!([VS.PROVISIONING, VS.READY, VS.FAILED] as string[]).includes(v.status)) return v.status;
    if (v.status === VS.FAILED && !v.deployedAt) return v.status;
    try {
      const backend = await this.backend();
      const [ready, message] = await backend.infrastructureReady();
      if (!ready) {
        await this.setStatus(VS.PROVISIONING, message);
        return this.vectorstore.status;
      }
      if (!(await backend.exists())) {
        await backend.create();
        this.deps.logger.info('vectorstore collection created', {
          vectorstore: rows.describe(v),
          collection: indexName(v),
        });
      }
      await this.refreshStats();
      await this.setStatus(VS.READY, '');
    } catch (err) {
      this.deps.logger.warn('reconcile failed', { vectorstore: rows.describe(v), error: messageOf(err) });
      await this.setStatus(VS.FAILED, messageOf(err));
    } finally {
      await rows.updateVectorstore(this.deps.db, v.id, { last_checked_at: NOW });
    }
    return this.vectorstore.status;
  }

  async refreshStats(): Promise<Record<string, unknown>> {
    const stats = await (await this.backend()).stats();
    const count = Number(stats.vector_count ?? 0);
    await rows.updateVectorstore(this.deps.db, this.vectorstore.id, { stats, vector_count: count });
    this.vectorstore = { ...this.vectorstore, vectorCount: count };
    return stats;
  }

  /** A document's chunks: split page by page, each with the document's metadata and where it came from. */
  chunks(document: rows.DocumentRow): Chunk[] {
    const spec = embeddingsSpec(this.vectorstore);
    const splitter = new RecursiveCharacterTextSplitter(
      spec.chunkSize ?? DEFAULTS.chunkSize,
      spec.chunkOverlap ?? DEFAULTS.chunkOverlap,
    );
    const pages = document.content.split(PAGE_BREAK);
    const out: Chunk[] = [];
    pages.forEach((page, p) => {
      for (const text of splitter.splitText(page)) {
        const metadata: Record<string, unknown> = {
          ...document.metadata,
          document_id: document.id,
          document: document.name,
          source: document.source,
          chunk: out.length,
        };
        if (pages.length > 1) metadata.page = p + 1;
        out.push({ id: chunkId(this.vectorstore.id, document.id, out.length), text, metadata });
      }
    });
    return out;
  }

  /** Split, embed and load a document's chunks, replacing any it had; the number of chunks. */
  async loadDocument(document: rows.DocumentRow): Promise<number> {
    this.requireReady();
    const { db } = this.deps;
    await rows.setDocumentStatus(db, document.id, DOC.LOADING, '');
    let count: number;
    try {
      const chunks = this.chunks(document);
      if (chunks.length === 0) throw new VectorstoreServiceError(`${document.name} has no text to load.`);
      // `_with_embeddings`: the backend, then the Provider's credentials, before anything is written.
      const backend = await this.backend();
      await this.embeddings.ready();
      await backend.upsert(chunks, embeddingsSpec(this.vectorstore).batchSize ?? DEFAULTS.batchSize);
      // it had more chunks before, e.g. with a smaller chunkSize.
      if (document.chunkCount > chunks.length) {
        await backend.delete(chunkIds(this.vectorstore.id, document.id, document.chunkCount).slice(chunks.length));
      }
      count = chunks.length;
    } catch (err) {
      await rows.setDocumentStatus(db, document.id, DOC.FAILED, messageOf(err));
      throw err;
    }
    await rows.setDocumentLoaded(db, document.id, count);
    return count;
  }

  /** Remove a document's chunks from a ready database, then the document. */
  async deleteDocument(document: rows.DocumentRow): Promise<void> {
    if (this.vectorstore.status === VS.READY) await (await this.backend()).deleteDocument(document);
    await rows.deleteDocumentRow(this.deps.db, document.id);
  }

  /** A Qdrant snapshot or a Pinecone backup, its row named as the database named it; `creating` until ready. */
  async snapshot(scheduled: boolean): Promise<string> {
    this.requireReady();
    const { db } = this.deps;
    const v = this.vectorstore;
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    const name = `${indexName(v)}-${stamp}`;
    const id = await rows.insertSnapshot(db, v.id, name, scheduled, v.vectorCount);
    let info: { name: string; sizeBytes: number | null; ready: boolean };
    try {
      info = await (await this.backend()).createSnapshot(name);
    } catch (err) {
      await rows.updateSnapshot(db, id, { status: SNAP.FAILED, status_message: messageOf(err) });
      throw err;
    }
    await rows.updateSnapshot(db, id, {
      name: info.name,
      size_bytes: info.sizeBytes,
      status: info.ready ? SNAP.READY : SNAP.CREATING,
    });
    await rows.updateVectorstore(db, v.id, { last_snapshot_at: NOW });
    return info.name;
  }

  private maintenance(): Record<string, unknown> {
    return maintenanceSpec(this.vectorstore);
  }

  private positive(key: string): number | undefined {
    const x = this.maintenance()[key];
    return typeof x === 'number' && x > 0 ? x : undefined;
  }

  /** Deletes failed snapshots' rows, then the oldest beyond the retention (in the database, then the row). */
  async pruneSnapshots(): Promise<number> {
    const retention = Math.floor(this.positive('snapshotRetention') ?? DEFAULTS.snapshotRetention);
    const { db } = this.deps;
    const all = await rows.snapshots(db, this.vectorstore.id);
    let removed = 0;
    for (const s of all.filter((x) => x.status === SNAP.FAILED)) {
      await rows.deleteSnapshotRow(db, s.id);
      removed += 1;
    }
    for (const s of all.filter((x) => x.status !== SNAP.FAILED).slice(retention)) {
      try {
        await (await this.backend()).deleteSnapshot(s.name);
      } catch (err) {
        this.deps.logger.warn('prune snapshot failed', {
          vectorstore: rows.describe(this.vectorstore),
          snapshot: s.name,
          error: messageOf(err),
        });
        continue;
      }
      await rows.deleteSnapshotRow(db, s.id);
      removed += 1;
    }
    return removed;
  }

  async snapshotDue(): Promise<boolean> {
    if (this.maintenance().snapshots === false) return false;
    return rows.snapshotOlderThan(
      this.deps.db,
      this.vectorstore.id,
      this.positive('snapshotIntervalHours') ?? DEFAULTS.snapshotIntervalHours,
    );
  }

  /** Reconcile, snapshot when due, prune, and name the documents whose task was lost. */
  async maintain(): Promise<MaintainResult & { retryStatus: Map<number, string> }> {
    const status = await this.reconcile();
    const result = {
      status,
      snapshot: null as string | null,
      pruned: 0,
      retry: [] as number[],
      retryStatus: new Map<number, string>(),
    };
    if (status !== VS.READY || !this.vectorstore.isActive) return result;
    if (await this.snapshotDue()) {
      try {
        result.snapshot = await this.snapshot(true);
      } catch (err) {
        this.deps.logger.warn('scheduled snapshot failed', {
          vectorstore: rows.describe(this.vectorstore),
          error: messageOf(err),
        });
      }
    }
    result.pruned = await this.pruneSnapshots();
    for (const d of await rows.stuckDocuments(this.deps.db, this.vectorstore.id, STUCK_AFTER_MINUTES)) {
      result.retry.push(d.id);
      result.retryStatus.set(d.id, d.status);
    }
    await rows.updateVectorstore(this.deps.db, this.vectorstore.id, { last_maintenance_at: NOW });
    return result;
  }
}
