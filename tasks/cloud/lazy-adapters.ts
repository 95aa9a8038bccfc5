/**
 * Each port's adapter, standing for its client until the first call: every method gets the client from its
 * `Lazy` and forwards. Written out per port (no Proxy) so that an adapter has exactly its port's methods and
 * nothing else: an `await` of it, or of a promise resolved with it, sees a plain object, not a thenable.
 */
import type { AutoScalingGroups } from './autoscaling-port.js';
import type { EksResource, ManagedNodeGroups, Nodegroup, NodegroupSpec } from './eks-port.js';
import type { Embeddings, EmbeddingsEndpoint, EmbeddingsRequest } from './embeddings-port.js';
import { Lazy } from './lazy.js';
import type { ChatRequest, ChatResult, LlmEndpoint, LlmProviders, Page } from './llm-port.js';
import type { McpCatalog, McpServers, McpTarget } from './mcp-port.js';
import type * as pc from './pinecone-port.js';
import type { Certificate, Certificates } from './acm-port.js';
import type { DnsRecord, DnsZones, HostedZone, RecordType } from './route53-port.js';
import type { KubeObject, KubeRef, Kubernetes } from './kubernetes-port.js';
import type { LookupResult, LookupType, Resolver } from './resolver-port.js';
import type { Mail, Mailer } from './mailer-port.js';
import type * as vdb from './vectordb-port.js';

export class LazyDnsZones implements DnsZones {
  constructor(private readonly client: Lazy<DnsZones>) {}
  async findZone(domain: string): Promise<HostedZone | null> {
    return (await this.client.get()).findZone(domain);
  }
  async getZone(id: string): Promise<HostedZone | null> {
    return (await this.client.get()).getZone(id);
  }
  async getOrCreateZone(domain: string): Promise<HostedZone> {
    return (await this.client.get()).getOrCreateZone(domain);
  }
  async getRecord(zoneId: string, name: string, type: RecordType): Promise<DnsRecord | null> {
    return (await this.client.get()).getRecord(zoneId, name, type);
  }
  async upsertRecord(zoneId: string, record: DnsRecord): Promise<void> {
    return (await this.client.get()).upsertRecord(zoneId, record);
  }
  async deleteRecord(zoneId: string, name: string, type: RecordType): Promise<boolean> {
    return (await this.client.get()).deleteRecord(zoneId, name, type);
  }
}

export class LazyCertificates implements Certificates {
  constructor(private readonly client: Lazy<Certificates>) {}
  async find(domain: string): Promise<Certificate | null> {
    return (await this.client.get()).find(domain);
  }
  async describe(arn: string): Promise<Certificate | null> {
    return (await this.client.get()).describe(arn);
  }
  async request(domain: string, subjectAlternativeNames?: string[]): Promise<Certificate> {
    return (await this.client.get()).request(domain, subjectAlternativeNames);
  }
}

export class LazyKubernetes implements Kubernetes {
  constructor(private readonly client: Lazy<Kubernetes>) {}
  async apply(manifest: KubeObject): Promise<KubeObject> {
    return (await this.client.get()).apply(manifest);
  }
  async get(ref: KubeRef): Promise<KubeObject | null> {
    return (await this.client.get()).get(ref);
  }
  async list(ref: Omit<KubeRef, 'name'> & { labelSelector?: string }): Promise<KubeObject[]> {
    return (await this.client.get()).list(ref);
  }
  async delete(ref: KubeRef): Promise<boolean> {
    return (await this.client.get()).delete(ref);
  }
}

export class LazyManagedNodeGroups implements ManagedNodeGroups {
  constructor(private readonly client: Lazy<ManagedNodeGroups>) {}
  async describeCluster(cluster: string): Promise<(EksResource & { status: string }) | null> {
    return (await this.client.get()).describeCluster(cluster);
  }
  async listAddons(cluster: string): Promise<EksResource[]> {
    return (await this.client.get()).listAddons(cluster);
  }
  async listNodegroups(cluster: string): Promise<string[]> {
    return (await this.client.get()).listNodegroups(cluster);
  }
  async describeNodegroup(cluster: string, name: string): Promise<Nodegroup | null> {
    return (await this.client.get()).describeNodegroup(cluster, name);
  }
  async createNodegroup(cluster: string, spec: NodegroupSpec): Promise<Nodegroup> {
    return (await this.client.get()).createNodegroup(cluster, spec);
  }
  async scaleNodegroup(cluster: string, name: string, desired: number, max: number): Promise<void> {
    return (await this.client.get()).scaleNodegroup(cluster, name, desired, max);
  }
}

export class LazyAutoScalingGroups implements AutoScalingGroups {
  constructor(private readonly client: Lazy<AutoScalingGroups>) {}
  async terminateInstance(instanceId: string, decrementDesiredCapacity: boolean): Promise<void> {
    return (await this.client.get()).terminateInstance(instanceId, decrementDesiredCapacity);
  }
}

export class LazyResolver implements Resolver {
  constructor(private readonly client: Lazy<Resolver>) {}
  async lookup(name: string, type: LookupType): Promise<LookupResult> {
    return (await this.client.get()).lookup(name, type);
  }
}

export class LazyMailer implements Mailer {
  constructor(private readonly client: Lazy<Mailer>) {}
  async send(mail: Mail): Promise<boolean> {
    return (await this.client.get()).send(mail);
  }
}

export class LazyEmbeddings implements Embeddings {
  constructor(private readonly client: Lazy<Embeddings>) {}
  async embed(endpoint: EmbeddingsEndpoint, request: EmbeddingsRequest): Promise<number[][]> {
    return (await this.client.get()).embed(endpoint, request);
  }
}

export class LazyMcpServers implements McpServers {
  constructor(private readonly client: Lazy<McpServers>) {}
  async discover(target: McpTarget): Promise<McpCatalog> {
    return (await this.client.get()).discover(target);
  }
}

export class LazyLlmProviders implements LlmProviders {
  constructor(private readonly client: Lazy<LlmProviders>) {}
  async chat(ep: LlmEndpoint, req: ChatRequest): Promise<ChatResult> {
    return (await this.client.get()).chat(ep, req);
  }
  async chatStreamFirstChunk(ep: LlmEndpoint, req: ChatRequest): Promise<unknown> {
    return (await this.client.get()).chatStreamFirstChunk(ep, req);
  }
  async transcribe(ep: LlmEndpoint, model: string, audio: Buffer, filename: string): Promise<void> {
    return (await this.client.get()).transcribe(ep, model, audio, filename);
  }
  async post(ep: LlmEndpoint, path: string, body: Record<string, unknown>): Promise<void> {
    return (await this.client.get()).post(ep, path, body);
  }
  async getPage(url: string, headers?: Record<string, string>): Promise<Page> {
    return (await this.client.get()).getPage(url, headers);
  }
}

/** `connect` answers at once with a handle whose calls make the client, then the target's connection, on first use. */
export class LazyVectorDatabases implements vdb.VectorDatabases {
  constructor(private readonly client: Lazy<vdb.VectorDatabases>) {}
  connect(target: vdb.VectorDbTarget): vdb.VectorDb {
    return new LazyVectorDb(new Lazy(async () => (await this.client.get()).connect(target)));
  }
}

export class LazyVectorDb implements vdb.VectorDb {
  constructor(private readonly db: Lazy<vdb.VectorDb>) {}
  async health(): Promise<void> {
    return (await this.db.get()).health();
  }
  async getCollection(name: string): Promise<vdb.CollectionInfo | null> {
    return (await this.db.get()).getCollection(name);
  }
  async createCollection(name: string, vectors: { size: number; distance: vdb.Distance }): Promise<void> {
    return (await this.db.get()).createCollection(name, vectors);
  }
  async createPayloadIndex(name: string, field: string, schema: 'integer' | 'keyword'): Promise<void> {
    return (await this.db.get()).createPayloadIndex(name, field, schema);
  }
  async deleteCollection(name: string): Promise<boolean> {
    return (await this.db.get()).deleteCollection(name);
  }
  async upsert(name: string, points: vdb.VectorPoint[]): Promise<void> {
    return (await this.db.get()).upsert(name, points);
  }
  async deletePoints(name: string, ids: (string | number)[]): Promise<void> {
    return (await this.db.get()).deletePoints(name, ids);
  }
  async deleteByFilter(name: string, filter: vdb.MatchFilter): Promise<void> {
    return (await this.db.get()).deleteByFilter(name, filter);
  }
  async count(name: string, filter?: vdb.MatchFilter): Promise<number> {
    return (await this.db.get()).count(name, filter);
  }
  async createSnapshot(name: string): Promise<vdb.SnapshotInfo> {
    return (await this.db.get()).createSnapshot(name);
  }
  async listSnapshots(name: string): Promise<vdb.SnapshotInfo[]> {
    return (await this.db.get()).listSnapshots(name);
  }
  async deleteSnapshot(name: string, snapshot: string): Promise<boolean> {
    return (await this.db.get()).deleteSnapshot(name, snapshot);
  }
}

/** As `LazyVectorDatabases`, for Pinecone's client: one project per API key. */
export class LazyPineconeProjects implements pc.PineconeProjects {
  constructor(private readonly client: Lazy<pc.PineconeProjects>) {}
  connect(target: { apiKey: string }): pc.PineconeProject {
    return new LazyPineconeProject(new Lazy(async () => (await this.client.get()).connect(target)));
  }
}

export class LazyPineconeProject implements pc.PineconeProject {
  constructor(private readonly project: Lazy<pc.PineconeProject>) {}
  async hasIndex(name: string): Promise<boolean> {
    return (await this.project.get()).hasIndex(name);
  }
  async indexStatus(name: string): Promise<pc.PineconeIndexStatus> {
    return (await this.project.get()).indexStatus(name);
  }
  async createIndex(index: pc.NewPineconeIndex): Promise<void> {
    return (await this.project.get()).createIndex(index);
  }
  async describeIndexStats(name: string): Promise<pc.PineconeIndexStats> {
    return (await this.project.get()).describeIndexStats(name);
  }
  async upsert(name: string, records: pc.PineconeRecord[]): Promise<void> {
    return (await this.project.get()).upsert(name, records);
  }
  async deleteIds(name: string, ids: string[]): Promise<void> {
    return (await this.project.get()).deleteIds(name, ids);
  }
  async createBackup(name: string, backupName: string, description: string): Promise<pc.PineconeBackup> {
    return (await this.project.get()).createBackup(name, backupName, description);
  }
  async deleteBackup(backupId: string): Promise<void> {
    return (await this.project.get()).deleteBackup(backupId);
  }
}
