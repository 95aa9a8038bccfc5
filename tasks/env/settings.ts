/**
 * Smarter's platform settings that the apps share, and what Smarter derives from them (Smarter keeps both in
 * `smarter/common/conf/`), under the environment variables Smarter's settings read (`get_env(NAME)` tries NAME,
 * then SMARTER_NAME), plus our time scale: the infrastructure settings of the llmclient and llmhost tasks, the EKS
 * settings of the llmhost and inventory tasks, and the operator's overrides of the vectorstores' credentials.
 * Smarter derives its API domains, Kubernetes namespace and platform name from ENVIRONMENT, ROOT_DOMAIN and
 * PLATFORM_SUBDOMAIN (`smarter/common/conf/settings.py`); `derived()` does the same.
 */
import { ParseError, parsers, type Setting, type ValuesOf } from '../../lib/config/settings.js';
import { both, pyBool } from '../smarter-env.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

/** A group's defaults, as its table declares them. */
const defaultsOf = <T extends Record<string, Setting<unknown>>>(table: T): ValuesOf<T> =>
  Object.fromEntries(Object.entries(table).map(([k, s]) => [k, s.default])) as ValuesOf<T>;

/** `smarter.common.const.SMARTER_CUSTOMER_SUPPORT_EMAIL` in Smarter's newest version (older ones: support@smarter.sh). */
export const SMARTER_CUSTOMER_SUPPORT_EMAIL = 'lpm0073@gmail.com';

function positive(t: string): number {
  const n = Number(t.trim());
  if (!Number.isFinite(n) || n <= 0) throw new ParseError('expected a positive number');
  return n;
}

function domain(t: string): string {
  const v = t.trim().toLowerCase().replace(/\.$/, '');
  if (!isDomainName(v)) throw new ParseError('expected a domain name, e.g. example.com');
  return v;
}

/** RFC 1034 host names: labels of letters, digits and inner hyphens, at least two labels, 253 characters at most. */
export function isDomainName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  return labels.length >= 2 && labels.every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(l));
}

export const INFRASTRUCTURE_SETTINGS = {
  createDnsRecord: setting({
    env: both('LLM_CLIENT_TASKS_CREATE_DNS_RECORD'),
    default: true,
    parse: pyBool,
    doc: "deploy_default_api creates the LLMClient's DNS A record (Route 53).",
  }),
  createIngressManifest: setting({
    env: both('LLM_CLIENT_TASKS_CREATE_INGRESS_MANIFEST'),
    default: true,
    parse: pyBool,
    doc: "deploy_default_api applies the LLMClient's Kubernetes Ingress (cert-manager then issues its TLS certificate).",
  }),
  defaultTtl: setting({
    env: both('LLM_CLIENT_TASKS_DEFAULT_TTL'),
    default: 600,
    parse: (t: string) => {
      const n = Number(t.trim());
      if (!Number.isInteger(n) || n < 0 || n > 2147483647) throw new ParseError('expected a TTL in seconds');
      return n;
    },
    doc: 'TTL in seconds of the DNS records the infrastructure tasks create.',
  }),
  environment: setting({
    env: both('ENVIRONMENT'),
    default: 'local',
    parse: (t: string) => {
      const v = t.trim().toLowerCase();
      if (!/^[a-z0-9][a-z0-9-]*$/.test(v)) throw new ParseError('expected an environment name, e.g. alpha or prod');
      return v;
    },
    doc: "Smarter's environment (`local`, `alpha`, `beta`, `next`, `prod`); part of the API domain and namespace.",
  }),
  rootDomain: setting({
    env: both('ROOT_DOMAIN'),
    default: 'example.com',
    parse: domain,
    doc: "Smarter's root domain: the API domain is `api.<platform subdomain>.<root>` in prod, `<environment>.api.<platform subdomain>.<root>` in alpha, beta and next; in `local`, LLMClients' hosts are under `api.local.<root>` and LLMHosts' under `local.api.<root>`; the platform name is its first label.",
  }),
  platformSubdomain: setting({
    env: both('PLATFORM_SUBDOMAIN'),
    default: 'platform',
    parse: (t: string) => {
      const v = t.trim().toLowerCase();
      if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(v)) {
        throw new ParseError('expected one DNS label, e.g. platform');
      }
      return v;
    },
    doc: "Smarter's platform subdomain (`SMARTER_PLATFORM_DEFAULT_SUBDOMAIN` is `platform`): part of the API domain and of the namespace `<platform name>-<platform subdomain>-<environment>`.",
  }),
  checkTimeScale: setting({
    env: ['SMARTER_WORKER_CHECK_TIME_SCALE'],
    default: 1,
    parse: positive,
    doc: 'Multiplies every interval the infrastructure tasks wait between checks (0.01 runs a 10-minute wait in 6 s; for tests).',
  }),
  customerSupportEmail: setting({
    env: ['SMARTER_CUSTOMER_SUPPORT_EMAIL'],
    default: SMARTER_CUSTOMER_SUPPORT_EMAIL,
    parse: (t: string) => {
      const v = t.trim();
      if (!/^[^\s@]+@[^\s@]+$/.test(v)) throw new ParseError('expected an e-mail address');
      return v;
    },
    doc: "The support address the LLMClient e-mails give (Smarter's constant `SMARTER_CUSTOMER_SUPPORT_EMAIL`, `smarter/common/const.py`).",
  }),
};

export type InfrastructureSettings = ValuesOf<typeof INFRASTRUCTURE_SETTINGS>;

export const INFRASTRUCTURE_DEFAULTS: InfrastructureSettings = defaultsOf(INFRASTRUCTURE_SETTINGS);

/**
 * What the llmhost and inventory tasks read besides the infrastructure settings: the EKS cluster and the node role
 * and subnets of new node groups.
 */
export const LLMHOST_SETTINGS = {
  awsEksClusterName: setting({
    env: both('AWS_EKS_CLUSTER_NAME'),
    default: 'apps-hosting-service',
    parse: parsers.string,
    doc: 'The EKS cluster whose managed node groups the llmhost tasks manage and the inventory describes.',
  }),
  llmhostNodeRoleArn: setting({
    env: both('LLMHOST_NODE_ROLE_ARN'),
    default: '',
    shownDefault: "that of the cluster's first node group not made by Smarter",
    parse: parsers.string,
    doc: 'IAM role of the node groups the llmhost tasks create.',
  }),
  llmhostNodeSubnetIds: setting<string[]>({
    env: both('LLMHOST_NODE_SUBNET_IDS'),
    default: [],
    shownDefault: "those of the cluster's first node group not made by Smarter",
    parse: parsers.list,
    doc: 'Subnets of the node groups the llmhost tasks create, comma separated.',
  }),
};

export type LlmhostSettings = ValuesOf<typeof LLMHOST_SETTINGS>;

export const LLMHOST_DEFAULTS: LlmhostSettings = defaultsOf(LLMHOST_SETTINGS);

/**
 * The operator's explicit overrides of the credentials the vectorstores' rows name. Each empty one is not set: the
 * vectorstore's own ApiConnection, Secret or Provider is used.
 */
export interface VectorstoreOverrides {
  /** Sent to every Qdrant server instead of its own key. */
  qdrantApiKey: string;
  /** Every vectorstore's embeddings API, instead of its Provider's `base_url`. */
  embeddingsUrl: string;
  /** Instead of its Provider's API key. */
  embeddingsApiKey: string;
}

export const NO_OVERRIDES: VectorstoreOverrides = { qdrantApiKey: '', embeddingsUrl: '', embeddingsApiKey: '' };

export interface Derived {
  /**
   * `smarter_settings.environment_api_domain` as it exists in DNS: in `local`, whose own API domain is
   * `api.localhost:9357`, the DNS service's proxy domain `local.api.<root>`. LLMHosts, the Ingress's cluster issuer
   * and `verify_domain`'s default zone use it.
   */
  apiDomain: string;
  /**
   * `LLMClient.base_api_domain`, under which an LLMClient's default host lives: the environment's API domain in
   * alpha, beta, next and prod, else `smarter_settings.proxy_api_domain`, `api.local.<root>`.
   */
  llmclientApiDomain: string;
  /** `smarter_settings.platform_name`. */
  platformName: string;
  /** `smarter_settings.environment_namespace`. */
  namespace: string;
}

/** `SmarterEnvironments.aws_environments`. */
const AWS_ENVIRONMENTS = new Set(['alpha', 'beta', 'next', 'prod']);
const LOCAL = 'local';

export function derived(
  s: Pick<InfrastructureSettings, 'environment' | 'rootDomain'> & { platformSubdomain?: string },
): Derived {
  const sub = s.platformSubdomain ?? INFRASTRUCTURE_DEFAULTS.platformSubdomain;
  const platformName = s.rootDomain.split('.')[0] ?? s.rootDomain;
  const rootApiDomain = `api.${sub}.${s.rootDomain}`;
  let apiDomain: string;
  if (s.environment === 'prod') apiDomain = rootApiDomain;
  else if (s.environment === LOCAL) apiDomain = `${LOCAL}.api.${s.rootDomain}`;
  else apiDomain = `${s.environment}.${rootApiDomain}`;
  const llmclientApiDomain = AWS_ENVIRONMENTS.has(s.environment) ? apiDomain : `api.${LOCAL}.${s.rootDomain}`;
  const namespace = s.environment === LOCAL ? `${platformName}-${LOCAL}` : `${platformName}-${sub}-${s.environment}`;
  return { apiDomain, llmclientApiDomain, platformName, namespace };
}
