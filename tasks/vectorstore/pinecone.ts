/**
 * The Pinecone backend (Smarter's `backends/pinecone.py`), a managed service: one serverless index per
 * vectorstore, its API key the Secret of the vectorstore's ApiConnection. Records go to the default namespace,
 * ids are the chunk ids, and the chunk's text is in the metadata's `text`, beside the chunk's metadata, where
 * LangChain's PineconeVectorStore keeps it, so indexes either side wrote stay searchable. Snapshots are
 * Pinecone backups (a paid plan), named by their `backup_id`.
 */
import { messageOf } from '../cloud/call.js';
import type { PineconeMetric, PineconeProject } from '../cloud/pinecone-port.js';
import type { BackendDeps, Chunk, SnapshotInfo, VectorstoreBackend } from './backend.js';
import { indexName } from './backend.js';
import { chunkIds } from './chunk-ids.js';
import { pineconeApiKey } from './credentials.js';
import type { VectorstoreEmbeddings } from './embeddings.js';
import { VectorStoreBackendConnectionError, VectorStoreBackendError, VectorstoreServiceError } from './errors.js';
import type { DocumentRow, VectorstoreRow } from './rows.js';
import { pineconeSpec } from './spec.js';

export const TEXT_KEY = 'text';
const METRICS = new Set<string>(['cosine', 'euclidean', 'dotproduct']);

export class PineconeBackend implements VectorstoreBackend {
  private project: Promise<PineconeProject> | undefined;

  constructor(
    readonly vectorstore: VectorstoreRow,
    private readonly deps: BackendDeps,
    private readonly embeddings: VectorstoreEmbeddings,
  ) {}

  get index(): string {
    return indexName(this.vectorstore);
  }

  /** `client`: made on first use with the ApiConnection's key. */
  private client(): Promise<PineconeProject> {
    this.project ??= pineconeApiKey(this.deps, this.vectorstore)
      .then((apiKey) => this.deps.cloud.pinecone.connect({ apiKey }))
      .catch((err: unknown) => {
        this.project = undefined;
        throw err;
      });
    return this.project;
  }

  /** Ready once Pinecone has initialized the index; an index not yet created is for `create` to make. */
  async infrastructureReady(): Promise<[boolean, string]> {
    if (!(await this.exists())) return [true, ''];
    const status = await (await this.client()).indexStatus(this.index);
    return [status.ready, status.ready ? '' : 'Pinecone is initializing the index.'];
  }

  async exists(): Promise<boolean> {
    try {
      return await (await this.client()).hasIndex(this.index);
    } catch (err) {
      throw new VectorStoreBackendConnectionError(`Pinecone is unreachable: ${messageOf(err)}`);
    }
  }

  async create(): Promise<void> {
    const v = this.vectorstore;
    if (!METRICS.has(v.metric)) {
      throw new VectorstoreServiceError(
        `Vectorstore ${v.name} has metric ${JSON.stringify(v.metric)}; expected cosine, euclidean or dotproduct.`,
      );
    }
    const { cloud, region } = pineconeSpec(v);
    await (
      await this.client()
    ).createIndex({
      name: this.index,
      dimension: v.dimension,
      metric: v.metric as PineconeMetric,
      cloud,
      region,
      deletionProtection: v.deletionProtection ? 'enabled' : 'disabled',
      tags: { created_by: this.deps.platformName, vectorstore: String(v.id) },
    });
  }

  async stats(): Promise<Record<string, unknown>> {
    const s = await (await this.client()).describeIndexStats(this.index);
    return { vector_count: s.totalVectorCount, dimension: s.dimension, index_fullness: s.indexFullness };
  }

  /** Each batch embedded in one request, then upserted in one, with the text in the metadata's `text`. */
  async upsert(chunks: Chunk[], batchSize: number): Promise<void> {
    for (let i = 0; i < chunks.length; i += batchSize) {
      const part = chunks.slice(i, i + batchSize);
      const vectors = await this.embeddings.embedDocuments(part.map((c) => c.text));
      await (
        await this.client()
      ).upsert(
        this.index,
        part.map((c, j) => ({ id: c.id, values: vectors[j] ?? [], metadata: { ...c.metadata, [TEXT_KEY]: c.text } })),
      );
    }
  }

  async delete(ids: string[]): Promise<void> {
    if (ids.length > 0) await (await this.client()).deleteIds(this.index, ids);
  }

  /** Smarter's `delete_document` for Pinecone: the document's chunk ids, as many as it has loaded. */
  async deleteDocument(document: DocumentRow): Promise<void> {
    if (document.chunkCount > 0) await this.delete(chunkIds(this.vectorstore.id, document.id, document.chunkCount));
  }

  async createSnapshot(name: string): Promise<SnapshotInfo> {
    let backup;
    try {
      backup = await (await this.client()).createBackup(this.index, name, `${this.deps.platformName} backup`);
    } catch (err) {
      throw new VectorStoreBackendError(`Pinecone did not back up ${this.index}: ${messageOf(err)}`);
    }
    return {
      name: backup.backupId || name,
      sizeBytes: backup.sizeBytes,
      ready: backup.status.toLowerCase() === 'ready',
    };
  }

  async deleteSnapshot(name: string): Promise<void> {
    await (await this.client()).deleteBackup(name);
  }
}
