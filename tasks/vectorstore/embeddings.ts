/**
 * A vectorstore's embeddings model (Smarter's `get_embeddings`, built on first use): its Provider's
 * OpenAI-compatible API, the manifest's model, and `spec.embeddings.dimensions` when set.
 */
import type { EmbeddingsEndpoint } from '../cloud/embeddings-port.js';
import type { CloudDeps } from '../cloud/cloud-deps.js';
import { type CredentialDeps, embeddingsEndpoint } from './credentials.js';
import type { VectorstoreRow } from './rows.js';
import { embeddingsSpec } from './spec.js';

export class VectorstoreEmbeddings {
  private endpoint: Promise<EmbeddingsEndpoint> | undefined;

  constructor(
    private readonly vectorstore: VectorstoreRow,
    private readonly deps: CredentialDeps & { cloud: CloudDeps },
  ) {}

  /** Resolves the Provider and its key, raising Smarter's configuration errors; once per service. */
  ready(): Promise<EmbeddingsEndpoint> {
    this.endpoint ??= embeddingsEndpoint(this.deps, this.vectorstore).catch((err: unknown) => {
      this.endpoint = undefined;
      throw err;
    });
    return this.endpoint;
  }

  /** One vector per text, in one request. */
  async embedDocuments(texts: string[]): Promise<number[][]> {
    const endpoint = await this.ready();
    const { dimensions } = embeddingsSpec(this.vectorstore);
    return this.deps.cloud.embeddings.embed(endpoint, {
      model: this.vectorstore.embeddingsModel,
      input: texts,
      ...(dimensions ? { dimensions } : {}),
    });
  }
}
