/**
 * The cloud adapters behind the ports, from the settings. Each is built on its first call, so a worker that
 * never deploys anything (the operational one) starts without a kubeconfig, SMTP or AWS credentials.
 */
import { ACMClient } from '@aws-sdk/client-acm';
import { EKSClient } from '@aws-sdk/client-eks';
import { Route53Client } from '@aws-sdk/client-route-53';
import type { ValuesOf } from '../../lib/config/settings.js';
import type { Logger } from '../../lib/logger.js';
import { ACM_REGION, AcmCertificates } from './acm.js';
import { EksNodeGroups } from './eks.js';
import { KubeClient, loadKubeConfig } from './kubernetes.js';
import { SmtpMailer } from './mailer.js';
import { FetchLlmProviders } from './llm.js';
import { SdkMcpServers } from './mcp.js';
import type { McpLlmConfig } from './mcp-llm-settings.js';
import type { CloudDeps } from './ports.js';
import { HttpEmbeddings } from './embeddings.js';
import { DnsResolver } from './resolver.js';
import { Route53Zones } from './route53.js';
import type { CLOUD_SETTINGS } from './settings.js';
import { QdrantDatabases } from './vectordb.js';
import { VECTORSTORE_CLOUD_DEFAULTS, type VECTORSTORE_CLOUD_SETTINGS } from './vectorstore-settings.js';

export type CloudConfig = ValuesOf<typeof CLOUD_SETTINGS> & Partial<ValuesOf<typeof VECTORSTORE_CLOUD_SETTINGS>>;

/** Route 53 is a global service whose API lives in us-east-1; the SDK still wants a region to sign for. */
const ROUTE53_REGION = 'us-east-1';

/** `make()` runs on the first use of any member; the members are bound to the made object. */
export function lazy<T extends object>(make: () => T): T {
  let made: T | undefined;
  return new Proxy({} as T, {
    get(_target, prop) {
      made ??= make();
      const value: unknown = Reflect.get(made, prop);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(made) : value;
    },
  });
}

export function openCloud(config: CloudConfig & Partial<McpLlmConfig>, logger: Logger): CloudDeps {
  const log = logger.child({ component: 'cloud' });
  const vs = { ...VECTORSTORE_CLOUD_DEFAULTS, ...definedOf(config) };
  return {
    // Endpoint (AWS_ENDPOINT_URL[_ROUTE_53|_ACM]), credentials and retry mode come from the SDK's own chain.
    route53: lazy(() => new Route53Zones(new Route53Client({ region: ROUTE53_REGION }), log)),
    acm: lazy(() => new AcmCertificates(new ACMClient({ region: ACM_REGION }), log)),
    kube: lazy(() => new KubeClient(loadKubeConfig, log)),
    // Region (AWS_REGION) and endpoint (AWS_ENDPOINT_URL[_EKS]) from the SDK's chain: EKS is regional.
    eks: lazy(() => new EksNodeGroups(new EKSClient({}), log)),
    resolver: lazy(() => new DnsResolver({ servers: config.dnsServers, timeoutSeconds: config.dnsTimeout, tries: config.dnsTries }, log)),
    mailer: lazy(
      () =>
        new SmtpMailer(
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
        ),
    ),
    vectordb: lazy(() => new QdrantDatabases(log, { apiKey: vs.qdrantApiKey, timeoutSeconds: vs.qdrantTimeout })),
    embeddings: lazy(() => new HttpEmbeddings({ baseUrl: vs.embeddingsUrl, apiKey: vs.embeddingsApiKey, timeoutSeconds: vs.embeddingsTimeout }, log)),
    mcp: lazy(() => new SdkMcpServers({ allowPrivateEndpoints: config.mcpAllowPrivateEndpoints ?? false }, log)),
    llm: lazy(() => new FetchLlmProviders({ timeoutSeconds: config.llmTimeout ?? 10 }, log)),
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
