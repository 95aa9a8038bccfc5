/**
 * The cloud adapters behind the ports, from the settings. Each is built on its first call, so a worker that
 * never deploys anything (the operational one) starts without a kubeconfig, SMTP or AWS credentials, and its
 * module (the cloud SDKs: AWS, Kubernetes, MCP, Qdrant, Pinecone, SMTP) is imported only then, which keeps
 * start-up cheap. The adapters standing in until then are plain objects (`lazy-adapters.ts`), never thenables.
 */
import type { ValuesOf } from '../../lib/config/settings.js';
import type { Logger } from '../../lib/logger.js';
import { Lazy } from './lazy.js';
import {
  lazyAutoScalingGroups,
  lazyCertificates,
  lazyDnsZones,
  lazyEmbeddings,
  lazyKubernetes,
  lazyLlmProviders,
  lazyMailer,
  lazyManagedNodeGroups,
  lazyMcpServers,
  lazyPineconeProjects,
  lazyResolver,
  lazyVectorDatabases,
} from './lazy-adapters.js';
import type { McpLlmConfig } from './mcp-llm-settings.js';
import type { CloudDeps } from './cloud-deps.js';
import { AwsReadiness, stsWhoAmI } from './readiness.js';
import type { CLOUD_SETTINGS } from './settings.js';
import { VECTORSTORE_CLOUD_DEFAULTS, type VECTORSTORE_CLOUD_SETTINGS } from './vectorstore-settings.js';

export type CloudConfig = ValuesOf<typeof CLOUD_SETTINGS> & Partial<ValuesOf<typeof VECTORSTORE_CLOUD_SETTINGS>>;

/** Route 53 is a global service whose API lives in us-east-1; the SDK still wants a region to sign for. */
const ROUTE53_REGION = 'us-east-1';

export function openCloud(config: CloudConfig & Partial<McpLlmConfig>, logger: Logger): CloudDeps {
  const log = logger.child({ component: 'cloud' });
  const vs = { ...VECTORSTORE_CLOUD_DEFAULTS, ...definedOf(config) };
  return {
    // Asks nothing of AWS until a task asks whether it is ready, and nothing at all without credentials.
    readiness: new AwsReadiness(stsWhoAmI(), log),
    // Endpoint (AWS_ENDPOINT_URL[_ROUTE_53|_ACM]), credentials and retry mode come from the SDK's own chain.
    route53: lazyDnsZones(
      new Lazy(async () => {
        const [{ Route53Client }, { Route53Zones }] = await Promise.all([
          import('@aws-sdk/client-route-53'),
          import('./route53.js'),
        ]);
        return new Route53Zones(new Route53Client({ region: ROUTE53_REGION }), log);
      }),
    ),
    // Region (AWS_REGION) from the SDK's chain: ACM is regional, and Smarter uses it in `smarter_settings.aws_region`.
    acm: lazyCertificates(
      new Lazy(async () => {
        const [{ ACMClient }, { AcmCertificates }] = await Promise.all([
          import('@aws-sdk/client-acm'),
          import('./acm.js'),
        ]);
        return new AcmCertificates(new ACMClient({}), log);
      }),
    ),
    kube: lazyKubernetes(
      new Lazy(async () => {
        const { KubeClient, loadKubeConfig } = await import('./kubernetes.js');
        return new KubeClient(loadKubeConfig, log);
      }),
    ),
    // Region (AWS_REGION) and endpoint (AWS_ENDPOINT_URL[_EKS]) from the SDK's chain: EKS is regional.
    eks: lazyManagedNodeGroups(
      new Lazy(async () => {
        const [{ EKSClient }, { EksNodeGroups }] = await Promise.all([
          import('@aws-sdk/client-eks'),
          import('./eks.js'),
        ]);
        return new EksNodeGroups(new EKSClient({}), log);
      }),
    ),
    // Region and endpoint (AWS_ENDPOINT_URL[_AUTO_SCALING]) from the SDK's chain, as for EKS.
    autoscaling: lazyAutoScalingGroups(
      new Lazy(async () => {
        const [{ AutoScalingClient }, { AwsAutoScalingGroups }] = await Promise.all([
          import('@aws-sdk/client-auto-scaling'),
          import('./autoscaling.js'),
        ]);
        return new AwsAutoScalingGroups(new AutoScalingClient({}), log);
      }),
    ),
    resolver: lazyResolver(
      new Lazy(async () => {
        const { DnsResolver } = await import('./resolver.js');
        return new DnsResolver(
          { servers: config.dnsServers, timeoutSeconds: config.dnsTimeout, tries: config.dnsTries },
          log,
        );
      }),
    ),
    mailer: lazyMailer(
      new Lazy(async () => {
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
    ),
    // Keys and URLs are each vectorstore's (the vectorstore tasks read them, with the operator's overrides).
    vectordb: lazyVectorDatabases(
      new Lazy(async () => {
        const { QdrantDatabases } = await import('./vectordb.js');
        return new QdrantDatabases(log, { timeoutSeconds: vs.qdrantTimeout });
      }),
    ),
    pinecone: lazyPineconeProjects(
      new Lazy(async () => {
        const { SdkPineconeProjects } = await import('./pinecone.js');
        return new SdkPineconeProjects(log, {
          controllerUrl: vs.pineconeControllerUrl,
          timeoutSeconds: vs.pineconeTimeout,
        });
      }),
    ),
    embeddings: lazyEmbeddings(
      new Lazy(async () => {
        const { HttpEmbeddings } = await import('./embeddings.js');
        return new HttpEmbeddings({ timeoutSeconds: vs.embeddingsTimeout }, log);
      }),
    ),
    mcp: lazyMcpServers(
      new Lazy(async () => {
        const { SdkMcpServers } = await import('./mcp.js');
        return new SdkMcpServers({ allowPrivateEndpoints: config.mcpAllowPrivateEndpoints ?? false }, log);
      }),
    ),
    llm: lazyLlmProviders(
      new Lazy(async () => {
        const { FetchLlmProviders } = await import('./llm.js');
        return new FetchLlmProviders({ timeoutSeconds: config.llmTimeout ?? 10 }, log);
      }),
    ),
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
