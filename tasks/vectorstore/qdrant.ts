/**
 * The Qdrant backend (Smarter's `backends/qdrant.py`), self-hosted on Kubernetes or Qdrant Cloud: one
 * collection per vectorstore, one unnamed dense vector per chunk, the chunk's text in the payload's
 * `page_content` and its metadata in `metadata`, as LangChain's QdrantVectorStore stores them, so the Python
 * side's search reads what we load.
 */
import type { Kubernetes } from '../cloud/kubernetes-port.js';
import type { Distance, VectorDb } from '../cloud/vectordb-port.js';
import type { BackendDeps, Chunk, SnapshotInfo, VectorstoreBackend } from './backend.js';
import { indexName } from './backend.js';
import { qdrantTarget } from './credentials.js';
import type { VectorstoreEmbeddings } from './embeddings.js';
import { VectorstoreServiceError } from './errors.js';
import { DOCUMENT_ID_KEY, HOSTING, HTTP_PORT, LABEL } from './const.js';
import { type DocumentRow, type VectorstoreRow, describe } from './rows.js';

const DISTANCES: Record<string, Distance> = { cosine: 'Cosine', euclidean: 'Euclid', dotproduct: 'Dot' };
const FAILING_REASONS = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull']);

export class QdrantBackend implements VectorstoreBackend {
  private db: Promise<VectorDb> | undefined;

  constructor(
    readonly vectorstore: VectorstoreRow,
    private readonly deps: BackendDeps,
    private readonly embeddings: VectorstoreEmbeddings,
  ) {}

  get selfHosted(): boolean {
    return this.vectorstore.hosting === HOSTING.SELF_HOSTED;
  }

  /** `kubernetes_name`: derived from the primary key, so renaming a vectorstore does not lose its server. */
  get kubernetesName(): string {
    return `vectorstore-${this.vectorstore.id}`;
  }

  /**
   * `QdrantKubernetes.endpoint`. Smarter's deploy records the same URL as `endpoint_url`, which is read first,
   * so a worker outside the cluster can be pointed at the server.
   */
  get selfHostedUrl(): string {
    return (
      this.vectorstore.endpointUrl ||
      `http://${this.kubernetesName}.${this.deps.namespace}.svc.cluster.local:${HTTP_PORT}`
    );
  }

  get collection(): string {
    return indexName(this.vectorstore);
  }

  /** The client of this server with this vectorstore's key, made on first use (its Secret read then). */
  private client(): Promise<VectorDb> {
    this.db ??= qdrantTarget(this.deps, this.vectorstore, this.selfHostedUrl)
      .then((target) => this.deps.cloud.vectordb.connect(target))
      .catch((err: unknown) => {
        this.db = undefined;
        throw err;
      });
    return this.db;
  }

  /** `infrastructure_ready`: a managed service is; a self-hosted server once its StatefulSet has a ready replica. */
  async infrastructureReady(kube: Kubernetes = this.deps.cloud.kube): Promise<[boolean, string]> {
    if (!this.selfHosted) return [true, ''];
    const ns = this.deps.namespace;
    const set = await kube.get({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      name: this.kubernetesName,
      namespace: ns,
    });
    if (!set) return [false, 'The Qdrant server does not exist.'];
    const ready = Number((set.status as { readyReplicas?: unknown } | undefined)?.readyReplicas ?? 0);
    if (ready >= 1) return [true, 'The Qdrant server is ready.'];
    const pods = await kube.list({
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: ns,
      labelSelector: `${LABEL}=${this.kubernetesName}`,
    });
    for (const pod of pods) {
      const statuses = ((pod.status as { containerStatuses?: unknown } | undefined)?.containerStatuses ?? []) as {
        state?: { waiting?: { reason?: string; message?: string } };
      }[];
      for (const c of statuses) {
        const waiting = c.state?.waiting;
        if (waiting?.reason && FAILING_REASONS.has(waiting.reason)) {
          return [false, `${waiting.reason}: ${waiting.message ?? ''}`.trim()];
        }
      }
    }
    return [false, 'The Qdrant server is starting.'];
  }

  async exists(): Promise<boolean> {
    return (await (await this.client()).getCollection(this.collection)) !== null;
  }

  async create(): Promise<void> {
    const distance = DISTANCES[this.vectorstore.metric];
    if (!distance) {
      throw new VectorstoreServiceError(
        `Vectorstore ${this.vectorstore.name} has metric ${JSON.stringify(this.vectorstore.metric)}; expected cosine, euclidean or dotproduct.`,
      );
    }
    const db = await this.client();
    await db.createCollection(this.collection, { size: this.vectorstore.dimension, distance });
    // chunks are found by document when a document is deleted, or loaded again.
    await db.createPayloadIndex(this.collection, DOCUMENT_ID_KEY, 'integer');
  }

  async stats(): Promise<Record<string, unknown>> {
    const db = await this.client();
    const info = await db.getCollection(this.collection);
    if (!info) {
      throw new VectorstoreServiceError(
        `Vectorstore ${describe(this.vectorstore)} has no collection ${this.collection}.`,
      );
    }
    return {
      vector_count: await db.count(this.collection),
      status: info.status,
      segments_count: info.segmentsCount,
      indexed_vectors_count: info.indexedVectorsCount,
    };
  }

  /** LangChain's `add_texts(batch_size=…)`: each batch is embedded in one request, then upserted and waited for. */
  async upsert(chunks: Chunk[], batchSize: number): Promise<void> {
    const db = await this.client();
    for (let i = 0; i < chunks.length; i += batchSize) {
      const part = chunks.slice(i, i + batchSize);
      const vectors = await this.embeddings.embedDocuments(part.map((c) => c.text));
      await db.upsert(
        this.collection,
        part.map((c, j) => ({
          id: c.id,
          vector: vectors[j] ?? [],
          payload: { page_content: c.text, metadata: c.metadata },
        })),
      );
    }
  }

  async delete(ids: string[]): Promise<void> {
    await (await this.client()).deletePoints(this.collection, ids);
  }

  /** `delete_document`: every chunk of the document by its `metadata.document_id`, whatever their number. */
  async deleteDocument(document: DocumentRow): Promise<void> {
    await (await this.client()).deleteByFilter(this.collection, { key: DOCUMENT_ID_KEY, value: document.id });
  }

  /** Qdrant names the snapshot itself, and it is ready when the call returns. */
  async createSnapshot(_name: string): Promise<SnapshotInfo> {
    const s = await (await this.client()).createSnapshot(this.collection);
    return { name: s.name, sizeBytes: s.size, ready: true };
  }

  async deleteSnapshot(name: string): Promise<void> {
    await (await this.client()).deleteSnapshot(this.collection, name);
  }
}
