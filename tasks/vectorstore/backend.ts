/**
 * A vectorstore's backend (Smarter's `backends/qdrant.py`) over the ports: one Qdrant collection per vectorstore,
 * one unnamed dense vector per chunk, the chunk's text in the payload's `page_content` and its metadata in
 * `metadata`, as LangChain's QdrantVectorStore stores them, so the Python side's search reads what we load.
 * Pinecone is refused by name (BackendNotImplemented) rather than imitated.
 */
import type { CloudDeps, Kubernetes } from '../cloud/ports.js';
import type { Distance, VectorDb } from '../cloud/vectordb-port.js';
import { BackendNotImplemented, SmarterConfigurationError, VectorstoreServiceError } from './errors.js';
import { DEFAULTS, DOCUMENT_ID_KEY, HOSTING, HTTP_PORT, LABEL } from './names.js';
import { type VectorstoreRow, describe } from './rows.js';

const DISTANCES: Record<string, Distance> = { cosine: 'Cosine', euclidean: 'Euclid', dotproduct: 'Dot' };
const FAILING_REASONS = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull']);

export interface Chunk {
  id: string;
  text: string;
  metadata: Record<string, unknown>;
}

/** `spec.embeddings` of the manifest. */
export function embeddingsSpec(v: VectorstoreRow): { chunkSize?: number; chunkOverlap?: number; batchSize?: number; dimensions?: number } {
  const e = v.spec.embeddings;
  if (e === null || typeof e !== 'object') return {};
  const pick = (k: string) => {
    const x = (e as Record<string, unknown>)[k];
    return typeof x === 'number' && Number.isInteger(x) && x > 0 ? x : undefined;
  };
  return { chunkSize: pick('chunkSize'), chunkOverlap: pick('chunkOverlap'), batchSize: pick('batchSize'), dimensions: pick('dimensions') };
}

export class QdrantBackend {
  private db: VectorDb | undefined;

  constructor(
    readonly vectorstore: VectorstoreRow,
    private readonly cloud: CloudDeps,
    private readonly namespace: string,
  ) {
    if (vectorstore.backend !== 'qdrant') throw new BackendNotImplemented(vectorstore.name, vectorstore.backend);
  }

  get selfHosted(): boolean {
    return this.vectorstore.hosting === HOSTING.SELF_HOSTED;
  }

  /** `kubernetes_name`: derived from the primary key, so renaming a vectorstore does not lose its server. */
  get kubernetesName(): string {
    return `vectorstore-${this.vectorstore.id}`;
  }

  /** `QdrantKubernetes.endpoint` for a self-hosted server without one recorded; else the row's `endpoint_url`. */
  get url(): string {
    if (this.vectorstore.endpointUrl) return this.vectorstore.endpointUrl;
    if (this.selfHosted) return `http://${this.kubernetesName}.${this.namespace}.svc.cluster.local:${HTTP_PORT}`;
    throw new SmarterConfigurationError(`Vectorstore ${this.vectorstore.name} has no endpoint_url: Smarter records its ApiConnection's URL there when it is deployed.`);
  }

  get collection(): string {
    if (!this.vectorstore.indexName) throw new VectorstoreServiceError(`Vectorstore ${this.vectorstore.name} has no index_name: deploy it first.`);
    return this.vectorstore.indexName;
  }

  private get client(): VectorDb {
    this.db ??= this.cloud.vectordb.connect({ url: this.url });
    return this.db;
  }

  /** `infrastructure_ready`: a managed service is; a self-hosted server once its StatefulSet has a ready replica. */
  async infrastructureReady(kube: Kubernetes = this.cloud.kube): Promise<[boolean, string]> {
    if (!this.selfHosted) return [true, ''];
    const set = await kube.get({ apiVersion: 'apps/v1', kind: 'StatefulSet', name: this.kubernetesName, namespace: this.namespace });
    if (!set) return [false, 'The Qdrant server does not exist.'];
    const ready = Number((set.status as { readyReplicas?: unknown } | undefined)?.readyReplicas ?? 0);
    if (ready >= 1) return [true, 'The Qdrant server is ready.'];
    const pods = await kube.list({ apiVersion: 'v1', kind: 'Pod', namespace: this.namespace, labelSelector: `${LABEL}=${this.kubernetesName}` });
    for (const pod of pods) {
      const statuses = ((pod.status as { containerStatuses?: unknown } | undefined)?.containerStatuses ?? []) as { state?: { waiting?: { reason?: string; message?: string } } }[];
      for (const c of statuses) {
        const waiting = c.state?.waiting;
        if (waiting?.reason && FAILING_REASONS.has(waiting.reason)) return [false, `${waiting.reason}: ${waiting.message ?? ''}`.trim()];
      }
    }
    return [false, 'The Qdrant server is starting.'];
  }

  async exists(): Promise<boolean> {
    return (await this.client.getCollection(this.collection)) !== null;
  }

  async create(): Promise<void> {
    const distance = DISTANCES[this.vectorstore.metric];
    if (!distance) throw new VectorstoreServiceError(`Vectorstore ${this.vectorstore.name} has metric ${JSON.stringify(this.vectorstore.metric)}; expected cosine, euclidean or dotproduct.`);
    await this.client.createCollection(this.collection, { size: this.vectorstore.dimension, distance });
    await this.client.createPayloadIndex(this.collection, DOCUMENT_ID_KEY, 'integer');
  }

  async stats(): Promise<Record<string, unknown>> {
    const info = await this.client.getCollection(this.collection);
    if (!info) throw new VectorstoreServiceError(`Vectorstore ${describe(this.vectorstore)} has no collection ${this.collection}.`);
    return {
      vector_count: await this.client.count(this.collection),
      status: info.status,
      segments_count: info.segmentsCount,
      indexed_vectors_count: info.indexedVectorsCount,
    };
  }

  /** LangChain's `add_texts(batch_size=…)`: each batch is embedded in one request, then upserted and waited for. */
  async upsert(chunks: Chunk[]): Promise<void> {
    const v = this.vectorstore;
    if (v.embeddingsProviderId === null || !v.embeddingsModel) throw new SmarterConfigurationError(`Vectorstore ${v.name} has no embeddings provider or model.`);
    const spec = embeddingsSpec(v);
    const batch = spec.batchSize ?? DEFAULTS.batchSize;
    for (let i = 0; i < chunks.length; i += batch) {
      const part = chunks.slice(i, i + batch);
      const vectors = await this.cloud.embeddings.embed({ model: v.embeddingsModel, input: part.map((c) => c.text), ...(spec.dimensions ? { dimensions: spec.dimensions } : {}) });
      await this.client.upsert(
        this.collection,
        part.map((c, j) => ({ id: c.id, vector: vectors[j] ?? [], payload: { page_content: c.text, metadata: c.metadata } })),
      );
    }
  }

  deletePoints(ids: string[]): Promise<void> {
    return this.client.deletePoints(this.collection, ids);
  }

  /** `delete_document`: every chunk of the document, whatever their number. */
  deleteDocument(documentId: number): Promise<void> {
    return this.client.deleteByFilter(this.collection, { key: DOCUMENT_ID_KEY, value: documentId });
  }

  async createSnapshot(): Promise<{ name: string; size: number }> {
    const s = await this.client.createSnapshot(this.collection);
    return { name: s.name, size: s.size };
  }

  async deleteSnapshot(name: string): Promise<void> {
    await this.client.deleteSnapshot(this.collection, name);
  }
}
