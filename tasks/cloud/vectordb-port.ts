/**
 * A vector database (Qdrant, self-hosted or Qdrant Cloud: they share one REST API). One port for the calls the
 * vectorstore tasks make: collections, points, snapshots and health. Failures are `CloudError`s of service
 * `vectordb`, naming the verb and the collection.
 */
export type Distance = 'Cosine' | 'Euclid' | 'Dot';

export interface VectorDbTarget {
  /** The server's URL, e.g. `http://vectorstore-12.ns.svc.cluster.local:6333` or a Qdrant Cloud cluster's. */
  url: string;
  apiKey?: string;
}

export interface CollectionInfo {
  name: string;
  /** Qdrant's `green`, `yellow`, `grey` or `red`. */
  status: string;
  pointsCount: number;
  indexedVectorsCount: number;
  segmentsCount: number;
}

export interface VectorPoint {
  /** A UUID or an unsigned integer, as Qdrant requires. */
  id: string | number;
  vector: number[];
  payload: Record<string, unknown>;
}

/** Points whose payload has `value` at `key` (a dotted path, e.g. `metadata.document_id`). */
export interface MatchFilter {
  key: string;
  value: string | number | boolean;
}

export interface SnapshotInfo {
  name: string;
  size: number;
  creationTime: string | null;
}

export interface VectorDb {
  /** Throws `CloudError` 'Unavailable' when the server does not answer `/healthz`. */
  health(): Promise<void>;
  getCollection(name: string): Promise<CollectionInfo | null>;
  /** Creates the collection with one unnamed dense vector; an existing one is success. */
  createCollection(name: string, vectors: { size: number; distance: Distance }): Promise<void>;
  createPayloadIndex(name: string, field: string, schema: 'integer' | 'keyword'): Promise<void>;
  /** True when it deleted, false when there was none. */
  deleteCollection(name: string): Promise<boolean>;
  upsert(name: string, points: VectorPoint[]): Promise<void>;
  deletePoints(name: string, ids: (string | number)[]): Promise<void>;
  deleteByFilter(name: string, filter: MatchFilter): Promise<void>;
  count(name: string, filter?: MatchFilter): Promise<number>;
  createSnapshot(name: string): Promise<SnapshotInfo>;
  listSnapshots(name: string): Promise<SnapshotInfo[]>;
  /** True when it deleted, false when there was none. */
  deleteSnapshot(name: string, snapshot: string): Promise<boolean>;
}

/** Each vectorstore has its own server (self-hosted) or cluster (Qdrant Cloud), so a client is made per target. */
export interface VectorDatabases {
  connect(target: VectorDbTarget): VectorDb;
}
