/**
 * The vector database port over `@qdrant/js-client-rest` (1.18, the last release that runs on Node 20). Qdrant
 * answers a failure with `{status: {error}}` and its HTTP status; the client throws that as an ApiError, which is
 * classified here. Idempotence as the port promises: creating an existing collection, or deleting a missing
 * collection or snapshot, is success.
 */
import { QdrantClient } from '@qdrant/js-client-rest';
import type { Logger } from '../../lib/logger.js';
import { cloudCall, isNetworkError, messageOf } from './call.js';
import { CloudError, type CloudErrorKind } from './errors.js';
import type {
  CollectionInfo,
  Distance,
  MatchFilter,
  SnapshotInfo,
  VectorDatabases,
  VectorDb,
  VectorDbTarget,
  VectorPoint,
} from './vectordb-port.js';

interface ApiErrorLike {
  status: number;
  data?: unknown;
}

function isApiError(err: unknown): err is ApiErrorLike {
  return typeof (err as { status?: unknown } | null)?.status === 'number';
}

/** Qdrant's own words: `{status: {error}}` in JSON, or the text its auth layer answers with. */
function qdrantMessage(err: ApiErrorLike): string {
  const data = err.data;
  const error = (data as { status?: { error?: unknown } } | null)?.status?.error;
  if (typeof error === 'string') return error;
  if (typeof data === 'string' && data.trim() !== '') return data.trim();
  return `HTTP ${err.status}`;
}

function kindOf(status: number): CloudErrorKind {
  if (status === 404) return 'NotFound';
  if (status === 401 || status === 403) return 'AccessDenied';
  if (status === 409) return 'Conflict';
  if (status === 429) return 'Throttled';
  if (status >= 500) return 'Unavailable';
  return 'Invalid';
}

/** The text of whatever was thrown; read by shape, since fetch's TypeError may come from another realm. */
export function textOf(err: unknown): string {
  const message = (err as { message?: unknown } | null)?.message;
  const cause = (err as { cause?: { message?: unknown; code?: unknown } } | null)?.cause;
  const base = typeof message === 'string' ? message : messageOf(err);
  const why = typeof cause?.message === 'string' ? cause.message : typeof cause?.code === 'string' ? cause.code : '';
  return why && !base.includes(why) ? `${base}: ${why}` : base;
}

export function classifyQdrant(verb: string, resource: string, err: unknown): CloudError {
  if (isApiError(err)) {
    return new CloudError('vectordb', verb, resource, kindOf(err.status), qdrantMessage(err), { cause: err });
  }
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'QdrantClientTimeoutError') {
    return new CloudError('vectordb', verb, resource, 'Unavailable', `timed out: ${textOf(err)}`, { cause: err });
  }
  // fetch's network failures are a TypeError "fetch failed" whose cause says why (ECONNREFUSED, ENOTFOUND…).
  if (isNetworkError(err) || (name === 'TypeError' && /fetch failed/.test(textOf(err)))) {
    return new CloudError('vectordb', verb, resource, 'Unavailable', textOf(err), { cause: err });
  }
  return new CloudError('vectordb', verb, resource, 'Invalid', textOf(err), { cause: err });
}

const toFilter = (f: MatchFilter) => ({ must: [{ key: f.key, match: { value: f.value } }] });

const toSnapshot = (s: { name: string; size: number; creation_time?: string | null }): SnapshotInfo => ({
  name: s.name,
  size: s.size,
  creationTime: s.creation_time ?? null,
});

export class QdrantVectorDb implements VectorDb {
  private readonly client: QdrantClient;

  constructor(
    private readonly target: VectorDbTarget,
    private readonly log: Logger,
    timeoutSeconds: number,
  ) {
    // The key goes in as the `api-key` header the client would send for `apiKey`, without the client's console
    // warning about a key over http (an in-cluster server is reached over http), nor its fire-and-forget
    // compatibility request, which also only warns on the console.
    this.client = new QdrantClient({
      url: target.url,
      timeout: timeoutSeconds * 1000,
      checkCompatibility: false,
      ...(target.apiKey ? { headers: { 'api-key': target.apiKey } } : {}),
    });
  }

  private call<T>(verb: string, resource: string, run: () => Promise<T>): Promise<T> {
    return cloudCall(this.log, 'vectordb', verb, resource, (err) => classifyQdrant(verb, resource, err), run);
  }

  async health(): Promise<void> {
    await this.call('healthz', this.target.url, () => this.client.api().healthz({}));
  }

  async getCollection(name: string): Promise<CollectionInfo | null> {
    try {
      const info = await this.call('get collection', name, () => this.client.getCollection(name));
      return {
        name,
        status: String(info.status),
        pointsCount: info.points_count ?? 0,
        indexedVectorsCount: info.indexed_vectors_count ?? 0,
        segmentsCount: info.segments_count,
      };
    } catch (err) {
      if (err instanceof CloudError && err.kind === 'NotFound') return null;
      throw err;
    }
  }

  async createCollection(name: string, vectors: { size: number; distance: Distance }): Promise<void> {
    if (await this.getCollection(name)) return;
    try {
      await this.call('create collection', name, () => this.client.createCollection(name, { vectors }));
    } catch (err) {
      // Another run created it between the two calls: Qdrant says "already exists" with a 400 (or 409).
      if (err instanceof CloudError && /already exists/i.test(err.message)) return;
      throw err;
    }
  }

  async createPayloadIndex(name: string, field: string, schema: 'integer' | 'keyword'): Promise<void> {
    await this.call('create payload index', `${name}/${field}`, () =>
      this.client.createPayloadIndex(name, { field_name: field, field_schema: schema, wait: true }),
    );
  }

  async deleteCollection(name: string): Promise<boolean> {
    if (!(await this.getCollection(name))) return false;
    return this.call('delete collection', name, () => this.client.deleteCollection(name));
  }

  async upsert(name: string, points: VectorPoint[]): Promise<void> {
    await this.call('upsert points', name, () => this.client.upsert(name, { wait: true, points }));
  }

  async deletePoints(name: string, ids: (string | number)[]): Promise<void> {
    if (ids.length === 0) return;
    await this.call('delete points', name, () => this.client.delete(name, { wait: true, points: ids }));
  }

  async deleteByFilter(name: string, filter: MatchFilter): Promise<void> {
    await this.call('delete points', name, () => this.client.delete(name, { wait: true, filter: toFilter(filter) }));
  }

  async count(name: string, filter?: MatchFilter): Promise<number> {
    const res = await this.call('count points', name, () =>
      this.client.count(name, { exact: true, ...(filter ? { filter: toFilter(filter) } : {}) }),
    );
    return res.count;
  }

  async createSnapshot(name: string): Promise<SnapshotInfo> {
    const s = await this.call('create snapshot', name, () => this.client.createSnapshot(name, { wait: true }));
    if (!s) {
      throw new CloudError(
        'vectordb',
        'create snapshot',
        name,
        'Unavailable',
        'Qdrant accepted the snapshot but did not describe it',
      );
    }
    return toSnapshot(s);
  }

  async listSnapshots(name: string): Promise<SnapshotInfo[]> {
    const list = await this.call('list snapshots', name, () => this.client.listSnapshots(name));
    return list.map(toSnapshot);
  }

  async deleteSnapshot(name: string, snapshot: string): Promise<boolean> {
    try {
      await this.call('delete snapshot', `${name}/${snapshot}`, () =>
        this.client.deleteSnapshot(name, snapshot, { wait: true }),
      );
      return true;
    } catch (err) {
      if (err instanceof CloudError && err.kind === 'NotFound') return false;
      throw err;
    }
  }
}

export class QdrantDatabases implements VectorDatabases {
  /** One client per server and key: each client holds its own connection pool, which a task run should reuse. */
  private readonly clients = new Map<string, VectorDb>();

  constructor(
    private readonly log: Logger,
    private readonly options: { timeoutSeconds: number },
  ) {}

  connect(target: VectorDbTarget): VectorDb {
    const key = `${target.url}\u0000${target.apiKey ?? ''}`;
    let db = this.clients.get(key);
    if (!db) {
      db = new QdrantVectorDb(target, this.log, this.options.timeoutSeconds);
      this.clients.set(key, db);
    }
    return db;
  }
}
