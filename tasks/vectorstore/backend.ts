/**
 * A vectorstore's backend (Smarter's `backends/base.py`): the database operations of one vectorstore, which
 * `VectorstoreService` calls, and the index name both backends use.
 */
import type { Logger } from '../../lib/logger.js';
import type { CloudDeps } from '../cloud/cloud-deps.js';
import type { CredentialDeps } from './credentials.js';
import { HOSTING } from './const.js';
import type { DocumentRow, VectorstoreRow } from './rows.js';

export interface Chunk {
  id: string;
  text: string;
  metadata: Record<string, unknown>;
}

/** `SnapshotInfo`: a Qdrant snapshot, or a Pinecone backup, which may not be ready yet. */
export interface SnapshotInfo {
  name: string;
  sizeBytes: number | null;
  ready: boolean;
}

export interface BackendDeps extends CredentialDeps {
  cloud: CloudDeps;
  /** Kubernetes namespace of self-hosted servers. */
  namespace: string;
  platformName: string;
  logger: Logger;
}

export interface VectorstoreBackend {
  /** Whether the infrastructure is ready, and why not; a managed service always is. */
  infrastructureReady(): Promise<[boolean, string]>;
  exists(): Promise<boolean>;
  create(): Promise<void>;
  /** The database's statistics, with `vector_count`. */
  stats(): Promise<Record<string, unknown>>;
  /** Embeds and inserts, or replaces, chunks: each batch embedded in one request, then written. */
  upsert(chunks: Chunk[], batchSize: number): Promise<void>;
  /** Deletes chunks; ids that do not exist are ignored. */
  delete(ids: string[]): Promise<void>;
  /** Deletes a document's chunks. */
  deleteDocument(document: DocumentRow): Promise<void>;
  createSnapshot(name: string): Promise<SnapshotInfo>;
  deleteSnapshot(name: string): Promise<void>;
}

/** `SmarterVectorstoreBackend.index_name`: the recorded one, else `VectorstoreMeta.default_index_name()`. */
export function indexName(
  v: Pick<VectorstoreRow, 'indexName' | 'name' | 'backend' | 'hosting' | 'accountNumber'>,
): string {
  return v.indexName || defaultIndexName(v);
}

/** Pinecone index names are at most 45 lowercase alphanumeric characters and hyphens (`PINECONE_INDEX_NAME_MAX_LENGTH`). */
const PINECONE_INDEX_NAME_MAX_LENGTH = 45;

/**
 * `VectorstoreMeta.default_index_name()`: a name unique on a shared service. A managed Pinecone project or Qdrant
 * Cloud cluster may serve many accounts, so the name carries the account number's digits; a self-hosted server
 * is the vectorstore's own.
 */
export function defaultIndexName(v: Pick<VectorstoreRow, 'name' | 'backend' | 'hosting' | 'accountNumber'>): string {
  const account = v.accountNumber.replace(/[^0-9]/g, '');
  const name = stripHyphens(v.name.toLowerCase().replace(/[^a-z0-9-]+/g, '-'));
  // A negative end counts from the end, as Python's slice does.
  if (v.backend === 'pinecone') {
    return stripHyphens(`${name.slice(0, PINECONE_INDEX_NAME_MAX_LENGTH - account.length - 1)}-${account}`);
  }
  if (v.hosting === HOSTING.SELF_HOSTED) return name;
  return `${name}-${account}`;
}

/** Python's `str.strip("-")`. */
const stripHyphens = (s: string): string => s.replace(/^-+|-+$/g, '');
