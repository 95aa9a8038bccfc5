/**
 * The outside systems the tasks touch, one port (interface) each, in its own `*-port.ts`. Tasks speak only these;
 * `tasks/cloud/` puts the real client library behind each (AWS SDK, @kubernetes/client-node, node:dns, nodemailer),
 * and tests drive those real clients against real servers on loopback (moto, a Kubernetes stand-in, dns2,
 * smtp-server).
 *
 * The ports are shaped for every infrastructure task Smarter has, not only the LLMClient ones: Kubernetes is
 * generic over kinds (LLMHost applies Deployments, Services, PVCs; inventory lists), and EKS node groups and vector
 * databases stand beside DNS and certificates.
 *
 * Idempotence is the adapters' job: creating what exists, or deleting what is gone, is success, because a
 * task that re-runs after a crash or a retry must not fail on its own earlier half-done work.
 */
import type { Certificates } from './acm-port.js';
import type { AutoScalingGroups } from './autoscaling-port.js';
import type { ManagedNodeGroups } from './eks-port.js';
import type { Embeddings } from './embeddings-port.js';
import type { Kubernetes } from './kubernetes-port.js';
import type { ResourceLedger } from './ledger-port.js';
import type { LlmProviders } from './llm-port.js';
import type { Mailer } from './mailer-port.js';
import type { McpServers } from './mcp-port.js';
import type { PineconeProjects } from './pinecone-port.js';
import type { Readiness } from './readiness.js';
import type { Resolver } from './resolver-port.js';
import type { DnsZones } from './route53-port.js';
import type { VectorDatabases } from './vectordb-port.js';

export interface CloudDeps {
  /** Whether the cloud provider, its DNS and its certificate service are ready (Smarter's `is_taskable`). */
  readiness: Readiness;
  route53: DnsZones;
  acm: Certificates;
  kube: Kubernetes;
  resolver: Resolver;
  mailer: Mailer;
  vectordb: VectorDatabases;
  pinecone: PineconeProjects;
  embeddings: Embeddings;
  eks: ManagedNodeGroups;
  autoscaling: AutoScalingGroups;
  mcp: McpServers;
  llm: LlmProviders;
  /** Where zones, records and certificates created or destroyed are recorded, as Smarter's signal receivers record them; absent, nothing is. */
  ledger?: ResourceLedger;
}
