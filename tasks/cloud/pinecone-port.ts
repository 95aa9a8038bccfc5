/**
 * A Pinecone project, reached with one API key (the Secret of a vectorstore's ApiConnection): its control plane
 * (indexes, backups) and each index's data plane, for the calls Smarter's `backends/pinecone.py` makes.
 * Records go to the index's default namespace, as Smarter's backend writes them. Failures are `CloudError`s of
 * service `pinecone`, naming the verb and the index or backup.
 */
export type PineconeMetric = 'cosine' | 'euclidean' | 'dotproduct';

export interface PineconeRecord {
  id: string;
  values: number[];
  /** Pinecone stores strings, numbers, booleans and lists of strings, and refuses the rest (null, objects) with a 400. */
  metadata: Record<string, unknown>;
}

export interface PineconeIndexStatus {
  ready: boolean;
  /** Pinecone's `Initializing`, `Ready`, `ScalingUp`, `Terminating`… */
  state: string;
}

export interface NewPineconeIndex {
  name: string;
  dimension: number;
  metric: PineconeMetric;
  cloud: string;
  region: string;
  deletionProtection: 'enabled' | 'disabled';
  tags: Record<string, string>;
}

export interface PineconeIndexStats {
  totalVectorCount: number;
  dimension: number | null;
  indexFullness: number | null;
}

export interface PineconeBackup {
  backupId: string;
  /** `Ready`, `Initializing`, `Failed`… */
  status: string;
  sizeBytes: number | null;
}

export interface PineconeProject {
  /** Whether the project has an index of that name (the Python client's `has_index`: in `list_indexes`). */
  hasIndex(name: string): Promise<boolean>;
  indexStatus(name: string): Promise<PineconeIndexStatus>;
  createIndex(index: NewPineconeIndex): Promise<void>;
  describeIndexStats(name: string): Promise<PineconeIndexStats>;
  upsert(name: string, records: PineconeRecord[]): Promise<void>;
  deleteIds(name: string, ids: string[]): Promise<void>;
  createBackup(name: string, backupName: string, description: string): Promise<PineconeBackup>;
  deleteBackup(backupId: string): Promise<void>;
}

export interface PineconeProjects {
  /** A client per API key: each vectorstore's ApiConnection may name another project. */
  connect(target: { apiKey: string }): PineconeProject;
}
