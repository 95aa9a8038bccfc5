/**
 * Each port's adapter, standing for its client until the first call: every method gets the client from its
 * `Lazy` and forwards. An adapter is a plain object holding exactly its port's methods (no Proxy), so that an
 * `await` of it, or of a promise resolved with it, sees a plain object, not a thenable; the method list of each
 * port is checked by the compiler against the port, so a method added to a port cannot be left unforwarded.
 */
import type { AutoScalingGroups } from './autoscaling-port.js';
import type { ManagedNodeGroups } from './eks-port.js';
import type { Embeddings } from './embeddings-port.js';
import { Lazy } from './lazy.js';
import type { LlmProviders } from './llm-port.js';
import type { McpServers } from './mcp-port.js';
import type { PineconeProject, PineconeProjects } from './pinecone-port.js';
import type { Certificates } from './acm-port.js';
import type { DnsZones } from './route53-port.js';
import type { Kubernetes } from './kubernetes-port.js';
import type { Resolver } from './resolver-port.js';
import type { Mailer } from './mailer-port.js';
import type { VectorDatabases, VectorDb, VectorDbTarget } from './vectordb-port.js';

/** A port whose every member is an async method: what can stand for its client until the first call. */
type AsyncPort<T> = { [K in keyof T]: (...args: never[]) => Promise<unknown> };

/** Every method name of a port, each `true`: one missing or one too many fails to compile. */
type MethodNames<T> = { readonly [K in keyof T]-?: true };

/** The adapter of one port: each of `methods` gets the client from `client` and calls it with its arguments. */
export function forwarding<T extends AsyncPort<T>>(client: Lazy<T>, methods: MethodNames<T>): T {
  const adapter: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const name of Object.keys(methods)) {
    adapter[name] = async (...args) => {
      const target = (await client.get()) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      const method = target[name];
      if (typeof method !== 'function') throw new TypeError(`the client made for this port has no method ${name}`);
      return method.apply(target, args);
    };
  }
  return adapter as unknown as T;
}

export const lazyDnsZones = (client: Lazy<DnsZones>): DnsZones =>
  forwarding(client, {
    findZone: true,
    getZone: true,
    getOrCreateZone: true,
    getRecord: true,
    upsertRecord: true,
    deleteRecord: true,
  });

export const lazyCertificates = (client: Lazy<Certificates>): Certificates =>
  forwarding(client, { find: true, describe: true, request: true });

export const lazyKubernetes = (client: Lazy<Kubernetes>): Kubernetes =>
  forwarding(client, { apply: true, get: true, list: true, delete: true });

export const lazyManagedNodeGroups = (client: Lazy<ManagedNodeGroups>): ManagedNodeGroups =>
  forwarding(client, {
    describeCluster: true,
    listAddons: true,
    listNodegroups: true,
    describeNodegroup: true,
    createNodegroup: true,
    scaleNodegroup: true,
  });

export const lazyAutoScalingGroups = (client: Lazy<AutoScalingGroups>): AutoScalingGroups =>
  forwarding(client, { terminateInstance: true });

export const lazyResolver = (client: Lazy<Resolver>): Resolver => forwarding(client, { lookup: true });

export const lazyMailer = (client: Lazy<Mailer>): Mailer => forwarding(client, { send: true });

export const lazyEmbeddings = (client: Lazy<Embeddings>): Embeddings => forwarding(client, { embed: true });

export const lazyMcpServers = (client: Lazy<McpServers>): McpServers => forwarding(client, { discover: true });

export const lazyLlmProviders = (client: Lazy<LlmProviders>): LlmProviders =>
  forwarding(client, { chat: true, chatStreamFirstChunk: true, transcribe: true, post: true, getPage: true });

/**
 * A port whose `connect` answers at once with a handle for one target (a vector database, a Pinecone project):
 * the handle's calls make the client, then the target's connection, on first use.
 */
function perTarget<A, H extends AsyncPort<H>>(
  client: Lazy<{ connect(target: A): H }>,
  methods: MethodNames<H>,
): { connect(target: A): H } {
  return { connect: (target) => forwarding(new Lazy(async () => (await client.get()).connect(target)), methods) };
}

export const lazyVectorDatabases = (client: Lazy<VectorDatabases>): VectorDatabases =>
  perTarget<VectorDbTarget, VectorDb>(client, {
    health: true,
    getCollection: true,
    createCollection: true,
    createPayloadIndex: true,
    deleteCollection: true,
    upsert: true,
    deletePoints: true,
    deleteByFilter: true,
    count: true,
    createSnapshot: true,
    listSnapshots: true,
    deleteSnapshot: true,
  });

/** One project per API key. */
export const lazyPineconeProjects = (client: Lazy<PineconeProjects>): PineconeProjects =>
  perTarget<{ apiKey: string }, PineconeProject>(client, {
    hasIndex: true,
    indexStatus: true,
    createIndex: true,
    describeIndexStats: true,
    upsert: true,
    deleteIds: true,
    createBackup: true,
    deleteBackup: true,
  });
