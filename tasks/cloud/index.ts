/**
 * The cloud adapters behind the ports, from the settings. Each is built on its first call, so a worker that
 * never deploys anything (the operational one) starts without a kubeconfig, SMTP or AWS credentials.
 */
import type { ValuesOf } from '../../lib/config/settings.js';
import type { Logger } from '../../lib/logger.js';
import type { McpLlmConfig } from './mcp-llm-settings.js';
import type { Certificates, CloudDeps, DnsZones, Kubernetes, Mailer, Resolver } from './ports.js';
import type { Embeddings } from './embeddings-port.js';
import type { AutoScalingGroups } from './autoscaling-port.js';
import type { ManagedNodeGroups } from './eks-port.js';
import type { LlmProviders } from './llm-port.js';
import { AwsReadiness, stsWhoAmI } from './readiness.js';
import type { McpServers } from './mcp-port.js';
import type { PineconeProject, PineconeProjects } from './pinecone-port.js';
import type { CLOUD_SETTINGS } from './settings.js';
import type { VectorDatabases, VectorDb } from './vectordb-port.js';
import { VECTORSTORE_CLOUD_DEFAULTS, type VECTORSTORE_CLOUD_SETTINGS } from './vectorstore-settings.js';

export type CloudConfig = ValuesOf<typeof CLOUD_SETTINGS> & Partial<ValuesOf<typeof VECTORSTORE_CLOUD_SETTINGS>>;

/** Route 53 is a global service whose API lives in us-east-1; the SDK still wants a region to sign for. */
const ROUTE53_REGION = 'us-east-1';

/** Every member of T is a method returning a promise: what an adapter loaded on first use can stand for. */
type AsyncMethods<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Promise<R> : never;
};

/**
 * `make()` runs on the first call of any method (once; a failed make is tried again on the next call), and
 * its module is imported only then: the cloud SDKs (AWS, Kubernetes, MCP, Qdrant, SMTP) cost a worker that
 * never calls them nothing at start-up.
 */
export function lazy<T extends AsyncMethods<T>>(make: () => Promise<T>): T {
  let made: Promise<T> | undefined;
  const target = () =>
    (made ??= make().catch((err: unknown) => {
      made = undefined;
      throw err;
    }));
  return new Proxy({} as T, {
    get(_target, prop) {
      return async (...args: unknown[]) => {
        const t = await target();
        return (Reflect.get(t, prop) as (...a: unknown[]) => unknown).apply(t, args);
      };
    },
  });
}

export function openCloud(config: CloudConfig & Partial<McpLlmConfig>, logger: Logger): CloudDeps {
  const log = logger.child({ component: 'cloud' });
  const vs = { ...VECTORSTORE_CLOUD_DEFAULTS, ...definedOf(config) };
  return {
    // Asks nothing of AWS until a task asks whether it is ready, and nothing at all without credentials.
    readiness: new AwsReadiness(stsWhoAmI(), log),
    // Endpoint (AWS_ENDPOINT_URL[_ROUTE_53|_ACM]), credentials and retry mode come from the SDK's own chain.
    route53: lazy<DnsZones>(async () => {
      const [{ Route53Client }, { Route53Zones }] = await Promise.all([
        import('@aws-sdk/client-route-53'),
        import('./route53.js'),
      ]);
      return new Route53Zones(new Route53Client({ region: ROUTE53_REGION }), log);
    }),
    // Region (AWS_REGION) from the SDK's chain: ACM is regional, and Smarter uses it in `smarter_settings.aws_region`.
    acm: lazy<Certificates>(async () => {
      const [{ ACMClient }, { AcmCertificates }] = await Promise.all([
        import('@aws-sdk/client-acm'),
        import('./acm.js'),
      ]);
      return new AcmCertificates(new ACMClient({}), log);
    }),
    kube: lazy<Kubernetes>(async () => {
      const { KubeClient, loadKubeConfig } = await import('./kubernetes.js');
      return new KubeClient(loadKubeConfig, log);
    }),
    // Region (AWS_REGION) and endpoint (AWS_ENDPOINT_URL[_EKS]) from the SDK's chain: EKS is regional.
    eks: lazy<ManagedNodeGroups>(async () => {
      const [{ EKSClient }, { EksNodeGroups }] = await Promise.all([import('@aws-sdk/client-eks'), import('./eks.js')]);
      return new EksNodeGroups(new EKSClient({}), log);
    }),
    // Region and endpoint (AWS_ENDPOINT_URL[_AUTO_SCALING]) from the SDK's chain, as for EKS.
    autoscaling: lazy<AutoScalingGroups>(async () => {
      const [{ AutoScalingClient }, { AwsAutoScalingGroups }] = await Promise.all([
        import('@aws-sdk/client-auto-scaling'),
        import('./autoscaling.js'),
      ]);
      return new AwsAutoScalingGroups(new AutoScalingClient({}), log);
    }),
    resolver: lazy<Resolver>(async () => {
      const { DnsResolver } = await import('./resolver.js');
      return new DnsResolver(
        { servers: config.dnsServers, timeoutSeconds: config.dnsTimeout, tries: config.dnsTries },
        log,
      );
    }),
    mailer: lazy<Mailer>(async () => {
      const { SmtpMailer } = await import('./mailer.js');
      return new SmtpMailer(
        {
          host: config.smtpHost,
          port: config.smtpPort,
          useSsl: config.smtpUseSsl,
          useTls: config.smtpUseTls,
          username: config.smtpUsername,
          password: config.smtpPassword,
          from: config.smtpFromEmail,
          bcc: config.emailAdmin,
          timeoutSeconds: config.smtpTimeout,
        },
        log,
      );
    }),
    // Keys and URLs are each vectorstore's (the vectorstore tasks read them, with the operator's overrides).
    vectordb: lazyVectorDatabases(async () => {
      const { QdrantDatabases } = await import('./vectordb.js');
      return new QdrantDatabases(log, { timeoutSeconds: vs.qdrantTimeout });
    }),
    pinecone: lazyPinecone(async () => {
      const { SdkPineconeProjects } = await import('./pinecone.js');
      return new SdkPineconeProjects(log, {
        controllerUrl: vs.pineconeControllerUrl,
        timeoutSeconds: vs.pineconeTimeout,
      });
    }),
    embeddings: lazy<Embeddings>(async () => {
      const { HttpEmbeddings } = await import('./embeddings.js');
      return new HttpEmbeddings({ timeoutSeconds: vs.embeddingsTimeout }, log);
    }),
    mcp: lazy<McpServers>(async () => {
      const { SdkMcpServers } = await import('./mcp.js');
      return new SdkMcpServers({ allowPrivateEndpoints: config.mcpAllowPrivateEndpoints ?? false }, log);
    }),
    llm: lazy<LlmProviders>(async () => {
      const { FetchLlmProviders } = await import('./llm.js');
      return new FetchLlmProviders({ timeoutSeconds: config.llmTimeout ?? 10 }, log);
    }),
  };
}

/** `connect` answers at once (its handle's methods are all async), so Qdrant's client loads on the first of those. */
function lazyVectorDatabases(make: () => Promise<VectorDatabases>): VectorDatabases {
  let made: Promise<VectorDatabases> | undefined;
  return {
    connect: (target) =>
      lazy<VectorDb>(async () => {
        made ??= make().catch((err: unknown) => {
          made = undefined;
          throw err;
        });
        return (await made).connect(target);
      }),
  };
}

/** As `lazyVectorDatabases`, for Pinecone's client. */
function lazyPinecone(make: () => Promise<PineconeProjects>): PineconeProjects {
  let made: Promise<PineconeProjects> | undefined;
  return {
    connect: (target) =>
      lazy<PineconeProject>(async () => {
        made ??= make().catch((err: unknown) => {
          made = undefined;
          throw err;
        });
        return (await made).connect(target);
      }),
  };
}

/** The vectorstore settings present in `config` (a config built from CLOUD_SETTINGS alone has none). */
function definedOf(config: CloudConfig): Partial<typeof VECTORSTORE_CLOUD_DEFAULTS> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(VECTORSTORE_CLOUD_DEFAULTS)) {
    const v = (config as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}
