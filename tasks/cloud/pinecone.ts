/**
 * The Pinecone port over Pinecone's official client (@pinecone-database/pinecone 8.2, API 2026-04, the last
 * release that runs on Node 20). The client finds an index's data-plane host by describing it, and retries a
 * 5xx itself (`maxRetries`, 3 by default); what it then throws is classified here by its error's name, with
 * Pinecone's own wording. The client has no request timeout, so each request carries an AbortSignal.
 */
import { Pinecone, type RecordMetadata } from '@pinecone-database/pinecone';
import type { Logger } from '../../lib/logger.js';
import { cloudCall, isNetworkError } from './call.js';
import type {
  NewPineconeIndex,
  PineconeBackup,
  PineconeIndexStats,
  PineconeIndexStatus,
  PineconeProject,
  PineconeProjects,
  PineconeRecord,
} from './pinecone-port.js';
import { CloudError, type CloudErrorKind } from './errors.js';
import { textOf } from './vectordb.js';

/** `fetch` as the client's generated runtime calls it. */
export type PineconeFetch = (url: string, init?: RequestInit) => Promise<Response>;

export interface PineconeConfig {
  /** The control plane; Pinecone's own (`https://api.pinecone.io`) when empty. */
  controllerUrl: string;
  timeoutSeconds: number;
  /** Retries of a 5xx after the first try; the client's default (3) when absent. */
  maxRetries?: number;
  /** Another fetch, e.g. one that trusts a test CA; the global one when absent. */
  fetch?: PineconeFetch;
}

const KINDS: Record<string, CloudErrorKind> = {
  PineconeNotFoundError: 'NotFound',
  PineconeAuthorizationError: 'AccessDenied',
  PineconeConflictError: 'Conflict',
  PineconeBadRequestError: 'Invalid',
  PineconeUnprocessableEntityError: 'Invalid',
  PineconeArgumentError: 'Invalid',
  PineconeInternalServerError: 'Unavailable',
  PineconeUnavailableError: 'Unavailable',
  PineconeMaxRetriesExceededError: 'Unavailable',
  PineconeConnectionError: 'Unavailable',
  PineconeUnableToResolveHostError: 'Unavailable',
};

/**
 * The client keeps a data-plane error's `message` but passes the control plane's `{error: {code, message},
 * status}` through as its raw text: Pinecone's own words are taken out of it.
 */
function pineconeWords(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
  } catch {
    // not JSON: the client's own sentence
  }
  return text;
}

export function classifyPinecone(verb: string, resource: string, err: unknown): CloudError {
  const name = (err as { name?: unknown } | null)?.name;
  const kind = typeof name === 'string' ? KINDS[name] : undefined;
  // A connection error's own message is generic; its cause says why (ECONNREFUSED, a certificate…).
  const cause = (err as { cause?: unknown } | null)?.cause;
  const detail =
    name === 'PineconeConnectionError' && cause !== undefined
      ? `${textOf(err)}: ${textOf(cause)}`
      : pineconeWords(textOf(err));
  if (kind) return new CloudError('pinecone', verb, resource, kind, detail, { cause: err });
  if (isNetworkError(err)) return new CloudError('pinecone', verb, resource, 'Unavailable', detail, { cause: err });
  return new CloudError('pinecone', verb, resource, 'Invalid', detail, { cause: err });
}

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

export class SdkPineconeProject implements PineconeProject {
  private readonly client: Pinecone;

  constructor(
    apiKey: string,
    private readonly log: Logger,
    config: PineconeConfig,
  ) {
    const base: PineconeFetch = config.fetch ?? ((url, init) => fetch(url, init));
    const ms = config.timeoutSeconds * 1000;
    const timed: PineconeFetch = (url, init = {}) =>
      base(url, { ...init, signal: init.signal ?? AbortSignal.timeout(ms) });
    this.client = new Pinecone({
      apiKey,
      fetchApi: timed as unknown as typeof fetch,
      ...(config.controllerUrl ? { controllerHostUrl: config.controllerUrl } : {}),
      ...(config.maxRetries !== undefined ? { maxRetries: config.maxRetries } : {}),
    });
  }

  private call<T>(verb: string, resource: string, run: () => Promise<T>): Promise<T> {
    return cloudCall(this.log, 'pinecone', verb, resource, (err) => classifyPinecone(verb, resource, err), run);
  }

  async hasIndex(name: string): Promise<boolean> {
    const list = await this.call('list indexes', name, () => this.client.listIndexes());
    return (list.indexes ?? []).some((i) => i.name === name);
  }

  async indexStatus(name: string): Promise<PineconeIndexStatus> {
    const index = await this.call('describe index', name, () => this.client.describeIndex(name));
    return { ready: index.status.ready, state: String(index.status.state) };
  }

  async createIndex(index: NewPineconeIndex): Promise<void> {
    await this.call('create index', index.name, () =>
      this.client.createIndex({
        name: index.name,
        dimension: index.dimension,
        metric: index.metric,
        spec: { serverless: { cloud: index.cloud, region: index.region } },
        deletionProtection: index.deletionProtection,
        tags: index.tags,
      }),
    );
  }

  async describeIndexStats(name: string): Promise<PineconeIndexStats> {
    const s = await this.call('describe index stats', name, () => this.client.index(name).describeIndexStats());
    return {
      totalVectorCount: num(s.totalRecordCount) ?? 0,
      dimension: num(s.dimension),
      indexFullness: num(s.indexFullness),
    };
  }

  async upsert(name: string, records: PineconeRecord[]): Promise<void> {
    if (records.length === 0) return;
    // Pinecone validates the metadata's values itself, answering a 400 that names the field.
    const sent = records.map((r) => ({ id: r.id, values: r.values, metadata: r.metadata as RecordMetadata }));
    await this.call('upsert vectors', name, () => this.client.index(name).upsert({ records: sent }));
  }

  async deleteIds(name: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.call('delete vectors', name, () => this.client.index(name).deleteMany({ ids }));
  }

  async createBackup(name: string, backupName: string, description: string): Promise<PineconeBackup> {
    const b = await this.call('create backup', name, () =>
      this.client.createBackup({ indexName: name, name: backupName, description }),
    );
    return { backupId: b.backupId, status: String(b.status), sizeBytes: num(b.sizeBytes) };
  }

  async deleteBackup(backupId: string): Promise<void> {
    await this.call('delete backup', backupId, () => this.client.deleteBackup(backupId));
  }
}

export class SdkPineconeProjects implements PineconeProjects {
  /** One client per key: the client caches each index's host per key and index. */
  private readonly clients = new Map<string, PineconeProject>();

  constructor(
    private readonly log: Logger,
    private readonly config: PineconeConfig,
  ) {}

  connect(target: { apiKey: string }): PineconeProject {
    let p = this.clients.get(target.apiKey);
    if (!p) {
      p = new SdkPineconeProject(target.apiKey, this.log, this.config);
      this.clients.set(target.apiKey, p);
    }
    return p;
  }
}
