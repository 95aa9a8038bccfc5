/**
 * One interface per outside system the infrastructure tasks touch. Tasks speak only these; `tasks/cloud/`
 * puts the real client library behind each (AWS SDK, @kubernetes/client-node, node:dns, nodemailer), and tests
 * drive those real clients against real servers on loopback (moto, a Kubernetes stand-in, dns2, smtp-server).
 *
 * The ports are shaped for every infrastructure task Smarter has, not only the LLMClient ones: Kubernetes is
 * generic over kinds (LLMHost applies Deployments, Services, PVCs; inventory lists), and later ports (EKS node
 * groups, vector databases) join `CloudDeps` beside these.
 *
 * Idempotence is the adapters' job: creating what exists, or deleting what is gone, is success, because a
 * task that re-runs after a crash or a retry must not fail on its own earlier half-done work.
 */
import { PythonException } from '../../lib/errors.js';
import type { Embeddings } from './embeddings-port.js';
import type { PineconeProjects } from './pinecone-port.js';
import type { VectorDatabases } from './vectordb-port.js';
import type { AutoScalingGroups } from './autoscaling-port.js';
import type { ManagedNodeGroups } from './eks-port.js';
import type { LlmProviders } from './llm-port.js';
import type { McpServers } from './mcp-port.js';
import type { ResourceLedger } from './ledger-port.js';
import type { Readiness } from './readiness.js';

/** Every record type Route 53 accepts (its `RRType`). */
export const RECORD_TYPES = [
  'A',
  'AAAA',
  'CAA',
  'CNAME',
  'DS',
  'HTTPS',
  'MX',
  'NAPTR',
  'NS',
  'PTR',
  'SOA',
  'SPF',
  'SRV',
  'SSHFP',
  'SVCB',
  'TLSA',
  'TXT',
] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** The record types public DNS is asked for through node:dns. */
export const LOOKUP_TYPES = ['A', 'AAAA', 'CAA', 'CNAME', 'MX', 'NAPTR', 'NS', 'PTR', 'SOA', 'SRV', 'TXT'] as const;
export type LookupType = (typeof LOOKUP_TYPES)[number];

export interface DnsRecord {
  /** Fully qualified, without the trailing dot (`api.example.com`). */
  name: string;
  type: RecordType;
  ttl: number;
  /** TXT values unquoted (the adapter adds and removes Route 53's quotes); empty for an alias. */
  values: string[];
  /** A Route 53 alias (an A record pointing at a load balancer, as an API domain's usually is) instead of values. */
  alias?: { zoneId: string; dnsName: string; evaluateTargetHealth: boolean };
}

export interface HostedZone {
  /** Route 53's id without the `/hostedzone/` prefix. */
  id: string;
  /** Without the trailing dot. */
  name: string;
  nameServers: string[];
}

/** Route 53. */
export interface DnsZones {
  /** The public zone named exactly `domain`, or null. */
  findZone(domain: string): Promise<HostedZone | null>;
  getZone(id: string): Promise<HostedZone | null>;
  getOrCreateZone(domain: string): Promise<HostedZone>;
  getRecord(zoneId: string, name: string, type: RecordType): Promise<DnsRecord | null>;
  /** UPSERT: creates or replaces the record set. */
  upsertRecord(zoneId: string, record: DnsRecord): Promise<void>;
  /** True when it deleted a record, false when there was none (both are success). */
  deleteRecord(zoneId: string, name: string, type: RecordType): Promise<boolean>;
}

export type CertificateStatus =
  'PENDING_VALIDATION' | 'ISSUED' | 'INACTIVE' | 'EXPIRED' | 'VALIDATION_TIMED_OUT' | 'REVOKED' | 'FAILED';

export interface Certificate {
  arn: string;
  domain: string;
  status: CertificateStatus;
  /** The CNAME records that prove ownership (ACM DNS validation), once ACM has made them. */
  validationRecords: DnsRecord[];
}

/** ACM, in the region of AWS_REGION, where Smarter's certificate service looks for them. */
export interface Certificates {
  /** The newest certificate for exactly `domain`, or null. */
  find(domain: string): Promise<Certificate | null>;
  describe(arn: string): Promise<Certificate | null>;
  /** Requests a DNS-validated certificate; SANs default to `*.<domain>`. */
  request(domain: string, subjectAlternativeNames?: string[]): Promise<Certificate>;
}

export interface KubeRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** Kubernetes, generic over kinds, through server-side apply with one field manager. */
export interface Kubernetes {
  apply(manifest: KubeObject): Promise<KubeObject>;
  get(ref: KubeRef): Promise<KubeObject | null>;
  list(ref: Omit<KubeRef, 'name'> & { labelSelector?: string }): Promise<KubeObject[]>;
  /** True when it deleted, false when there was nothing (a 404 is success). */
  delete(ref: KubeRef): Promise<boolean>;
}

/** A lookup's answer; a timeout or a server failure is thrown as a CloudError ('Unavailable'), never an answer. */
export type LookupResult = { status: 'found'; values: string[] } | { status: 'nxdomain' } | { status: 'nodata' };

/** Public DNS, as the world sees it (not Route 53's API). */
export interface Resolver {
  lookup(name: string, type: LookupType): Promise<LookupResult>;
}

export interface Mail {
  to: string[];
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  /** True once the server accepted it; false when SMTP is not configured (nothing sent, logged). */
  send(mail: Mail): Promise<boolean>;
}

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

export type CloudService =
  'route53' | 'acm' | 'eks' | 'autoscaling' | 'kubernetes' | 'dns' | 'smtp' | 'vectordb' | 'pinecone' | 'embeddings';

export type CloudErrorKind = 'NotFound' | 'AccessDenied' | 'Conflict' | 'Throttled' | 'Invalid' | 'Unavailable';

/**
 * What an adapter throws, after its client's own retries: which system, which verb on which resource, and
 * the kind of failure, so a FAILURE result says what failed where. Python sees the class
 * `smarter.apps.infrastructure.CloudError` with that message.
 */
export class CloudError extends PythonException {
  constructor(
    readonly service: CloudService,
    readonly verb: string,
    readonly resource: string,
    readonly kind: CloudErrorKind,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super('CloudError', 'smarter.apps.infrastructure', `${service} ${verb} ${resource}: ${kind}: ${detail}`);
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}
