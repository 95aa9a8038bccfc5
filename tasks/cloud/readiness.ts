/**
 * Whether the cloud is ready, as Smarter's infrastructure services decide it, and Smarter's `is_taskable()` gate
 * (`smarter/smarter/apps/llmclient/tasks/utils.py`) built on it. It lives with the cloud adapters rather than in the
 * llmclient app because the llmhost app asks it too (`destroy_llmhost` queues the A record's deletion only when
 * DNS is ready).
 *
 * Smarter's provider (`AWSProvider.ready`, `providers/aws/provider.py`) is ready when AWS credentials are configured
 * (`AWSBase.__init__`: running inside AWS, a profile, or an access key pair) and AWS confirms them (STS
 * GetCallerIdentity, `AWSBase.identity`). Its DNS and certificate services (`Route53DNSService.ready`,
 * `ACMCertificateService.ready`) are ready exactly when the provider is. Without credentials nothing is sent to
 * AWS: a laptop or compose install without an AWS account answers "not ready" at once, and the LLMClient tasks end
 * successfully instead of failing, retrying and dead-lettering.
 */
import type { Logger } from '../../lib/logger.js';
import type { TaskContext } from '../../lib/registry/context.js';
import type { AnyTask } from '../../lib/registry/define-task.js';
import { messageOf } from './call.js';

/** Smarter's `infrastructure.ready`, `infrastructure.dns.ready` and `infrastructure.certificates.ready`. */
export interface Readiness {
  provider(): Promise<boolean>;
  dns(): Promise<boolean>;
  certificates(): Promise<boolean>;
}

/** The account the credentials belong to, as STS GetCallerIdentity answers; rejects when AWS refuses them. */
export type WhoAmI = () => Promise<string>;

const isSet = (env: NodeJS.ProcessEnv, name: string): boolean => (env[name] ?? '').trim() !== '';

/**
 * Whether AWS credentials are configured, read from the environment without a request. Smarter's three sources
 * (`AWS_DEPLOYED`, its flag for running inside AWS, where the role's credentials apply; a profile; an access key
 * pair), plus the two the AWS SDK's chain reads inside AWS without that flag: IRSA's web identity token (which EKS
 * injects) and the ECS/EKS Pod Identity container credentials.
 */
export function awsCredentialsConfigured(env: NodeJS.ProcessEnv): boolean {
  return (
    isSet(env, 'AWS_DEPLOYED') ||
    isSet(env, 'AWS_PROFILE') ||
    (isSet(env, 'AWS_ACCESS_KEY_ID') && isSet(env, 'AWS_SECRET_ACCESS_KEY')) ||
    (isSet(env, 'AWS_WEB_IDENTITY_TOKEN_FILE') && isSet(env, 'AWS_ROLE_ARN')) ||
    isSet(env, 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI') ||
    isSet(env, 'AWS_CONTAINER_CREDENTIALS_FULL_URI')
  );
}

/**
 * AWS readiness. As Smarter's `AWSBase` keeps the identity once fetched, a confirmation lasts for the process; a
 * refusal does not, so the next task asks again (credentials may have been fixed, or AWS was briefly unreachable).
 * The environment is read at each check, since the SDK's own chain reads it at each client's first call.
 */
export class AwsReadiness implements Readiness {
  private confirmed = false;
  /** The last state logged, so that a change is logged once rather than on every task. */
  private reported: 'ready' | 'unconfigured' | 'refused' | undefined;

  constructor(
    private readonly whoAmI: WhoAmI,
    private readonly logger: Logger,
    private readonly env: () => NodeJS.ProcessEnv = () => process.env,
  ) {}

  async provider(): Promise<boolean> {
    if (this.confirmed) return true;
    if (!awsCredentialsConfigured(this.env())) {
      this.report(
        'unconfigured',
        'warn',
        'AWS credentials are not configured (no access key pair, profile, web identity or AWS_DEPLOYED): the cloud is not ready',
      );
      return false;
    }
    try {
      const account = await this.whoAmI();
      this.confirmed = true;
      this.report('ready', 'info', `authenticated with AWS, account ${account}`);
      return true;
    } catch (err) {
      this.report('refused', 'error', `AWS authentication failed: could not fetch the AWS identity: ${messageOf(err)}`);
      return false;
    }
  }

  dns(): Promise<boolean> {
    return this.provider();
  }

  certificates(): Promise<boolean> {
    return this.provider();
  }

  private report(
    state: NonNullable<AwsReadiness['reported']>,
    level: 'info' | 'warn' | 'error',
    message: string,
  ): void {
    if (this.reported === state) return;
    this.reported = state;
    this.logger[level](message, { service: 'sts' });
  }
}

/** STS GetCallerIdentity through the SDK's own chain (endpoint, credentials, retries), loaded on first use. */
export function stsWhoAmI(): WhoAmI {
  return async () => {
    const { STSClient, GetCallerIdentityCommand } = await import('@aws-sdk/client-sts');
    // STS wants a region to sign for; any answers for the caller's identity.
    const region = process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1';
    const client = new STSClient({ region });
    try {
      const identity = await client.send(new GetCallerIdentityCommand({}));
      return identity.Account ?? 'unknown';
    } finally {
      client.destroy();
    }
  };
}

/**
 * Smarter's `is_taskable()`: the provider, then its DNS, then its certificate service, each logged at info level
 * when not ready, as Smarter words it.
 */
export async function isTaskable(readiness: Readiness, logger: Logger): Promise<boolean> {
  if (!(await readiness.provider())) {
    logger.info('is_taskable() the cloud provider is not ready. Request is not taskable.');
    return false;
  }
  if (!(await readiness.dns())) {
    logger.info('is_taskable() the DNS service is not ready. Request is not taskable.');
    return false;
  }
  if (!(await readiness.certificates())) {
    logger.info('is_taskable() the certificate service is not ready. Request is not taskable.');
    return false;
  }
  return true;
}

/**
 * A task that begins with `is_taskable()`: when the cloud is not ready it returns `notReady` at once, successfully,
 * before reading a row or calling the cloud, as each of Smarter's LLMClient tasks does.
 */
export function whenTaskable<D extends { cloud: { readiness: Readiness } }, T extends AnyTask<D>>(
  task: T,
  notReady: null | false,
): T {
  return {
    ...task,
    run: async (params: unknown, ctx: TaskContext<D>) =>
      (await isTaskable(ctx.deps.cloud.readiness, ctx.logger)) ? task.run(params, ctx) : notReady,
  };
}
