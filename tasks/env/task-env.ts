/**
 * What Smarter's tasks are given at start-up: the clients (`SmarterDeps`, in `ctx.deps`) and the one task
 * environment (`TaskEnv`) every task definition is built from, made here from the loaded settings. Every app
 * stands on it; it stands on the shared rooms (tasks/cloud, tasks/db) and on Smarter's settings (`./settings.ts`).
 */
import { hasCode } from '../../lib/errors.js';
import type { RetryPolicy } from '../../lib/registry/define-task.js';
import { CloudError } from '../cloud/errors.js';
import type { CloudDeps } from '../cloud/cloud-deps.js';
import type { Database } from '../db/database.js';
import {
  DatabaseError,
  DoesNotExist,
  LLMClientCustomDomainExists,
  LLMClientCustomDomainNotFound,
  SmarterValueError,
} from '../errors.js';
import {
  type Derived,
  INFRASTRUCTURE_DEFAULTS,
  type InfrastructureSettings,
  LLMHOST_DEFAULTS,
  type LlmhostSettings,
  type VectorstoreOverrides,
  derived,
} from './settings.js';

export interface SmarterDeps {
  db: Database;
  /** Route 53, ACM, Kubernetes, DNS and SMTP, each built on first use (`tasks/cloud/index.ts`). */
  cloud: CloudDeps;
}

/** The settings `taskEnv` reads: the loaded configuration, or a test's own. */
export interface SmarterTaskSettings
  extends Partial<InfrastructureSettings>, Partial<LlmhostSettings>, Partial<VectorstoreOverrides> {
  operationalQueue: string;
  infrastructureQueue: string;
  maxRetries: number;
  retryBackoff: boolean;
  /** Smarter's `fernet_encryption_key`, for the Secrets of MCPClients, providers, LLMHosts and vectorstores. */
  fernetEncryptionKey?: string;
  /** Where `<PROVIDER>_API_KEY` is looked up (the process environment unless a test passes its own). */
  environ?: (name: string) => string | undefined;
  /** Whether LLMHosts' health URLs are probed (inside a cluster unless a test says otherwise). */
  healthProbes?: boolean;
}

/**
 * Every task's environment: both queues, the retry policies, Smarter's settings and what Smarter derives from
 * them. Each task declares its queue from it (the queue is a field of the definition, never a folder).
 */
export interface TaskEnv extends Derived {
  operationalQueue: string;
  infrastructureQueue: string;
  /** Smarter's `autoretry_for=(Exception,), retry_backoff=…, max_retries=…` (the `@app.task` decorators under Smarter's `smarter/smarter/apps/<app>/tasks`). */
  autoretry: RetryPolicy;
  /**
   * The llmclient infrastructure tasks' autoretry: transient failures are retried as Smarter's
   * `autoretry_for=(Exception,)` does; what cannot change by retrying (`isPermanent`) fails at once.
   */
  infrastructureRetry: RetryPolicy;
  /** The llmclient and llmhost tasks' settings (DNS record, Ingress, TTL, environment, root domain, time scale). */
  settings: InfrastructureSettings;
  /** Seconds to wait for a Smarter interval, scaled by SMARTER_WORKER_CHECK_TIME_SCALE. */
  wait(seconds: number): number;
  /** The EKS settings of the llmhost and inventory tasks. */
  llmhost: LlmhostSettings;
  /** Smarter's `fernet_encryption_key`: the Secrets of MCPClients, providers, LLMHosts and vectorstores. */
  fernetEncryptionKey: string;
  /**
   * Whether active LLMHosts' health URLs are probed: Smarter's `HealthProber` probes only inside the cluster
   * (`KUBERNETES_SERVICE_HOST` set), the only place their Services answer.
   */
  healthProbes: boolean;
  /** The operator's explicit overrides of the credentials the vectorstores' rows name (each empty one unset). */
  overrides: VectorstoreOverrides;
  /**
   * Smarter's `Provider.production_api_key()` reads `<NAME>_API_KEY` from the process environment, a name
   * made from the provider's name, so it cannot be a declared setting; tests pass their own environment.
   */
  environ: (name: string) => string | undefined;
}

/** Errors that retrying cannot fix. */
export function isPermanent(err: Error): boolean {
  if (err instanceof CloudError) return err.kind !== 'Throttled' && err.kind !== 'Unavailable';
  if (err instanceof DoesNotExist || err instanceof SmarterValueError) return true;
  if (err instanceof LLMClientCustomDomainExists || err instanceof LLMClientCustomDomainNotFound) return true;
  if (err instanceof DatabaseError) return err.pyType !== 'OperationalError';
  return hasCode(err, 'TASK_ARGUMENTS_INVALID');
}

/** The one place a `TaskEnv` is made. */
export function taskEnv(s: SmarterTaskSettings): TaskEnv {
  const settings = pick(INFRASTRUCTURE_DEFAULTS, s);
  // Celery's defaults for the rest: retry_backoff_max 600 s, retry_jitter True.
  const autoretry: RetryPolicy = { autoretryFor: 'all', maxRetries: s.maxRetries, retryBackoff: s.retryBackoff };
  const scale = settings.checkTimeScale;
  return {
    ...derived(settings),
    operationalQueue: s.operationalQueue,
    infrastructureQueue: s.infrastructureQueue,
    autoretry,
    infrastructureRetry: { ...autoretry, autoretryFor: (err: Error) => !isPermanent(err) },
    settings,
    wait: (seconds) => Math.round(seconds * scale * 1000) / 1000,
    llmhost: pick(LLMHOST_DEFAULTS, s),
    fernetEncryptionKey: s.fernetEncryptionKey ?? '',
    healthProbes: s.healthProbes ?? Boolean(process.env.KUBERNETES_SERVICE_HOST),
    overrides: {
      qdrantApiKey: s.qdrantApiKey ?? '',
      embeddingsUrl: s.embeddingsUrl ?? '',
      embeddingsApiKey: s.embeddingsApiKey ?? '',
    },
    environ: s.environ ?? ((name) => process.env[name]),
  };
}

/** A group's settings: its defaults, overridden by whatever the loaded configuration sets. */
function pick<T extends object>(defaults: T, s: object): T {
  const out = { ...defaults };
  for (const k of Object.keys(out) as (keyof T)[]) {
    const v = (s as Record<string, unknown>)[k as string];
    if (v !== undefined) (out as Record<string, unknown>)[k as string] = v;
  }
  return out;
}
