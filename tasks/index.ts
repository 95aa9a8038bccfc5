/**
 * The single list of Smarter's tasks this worker runs. Each task declares its queue; `smarter-beat check`
 * and the test suite verify that every Beat entry names the queue its task declares.
 */
import type { AnyTask } from '../lib/registry/define-task.js';
import { accountTasks } from './account/index.js';
import type { SmarterDeps, TaskEnv } from './deps.js';
import { guardrailTasks } from './guardrail/index.js';
import { infrastructureTasks } from './infrastructure/index.js';
import { infraEnv } from './llmclient/env.js';
import { llmclientTasks } from './llmclient/index.js';
import { INFRASTRUCTURE_DEFAULTS, type InfrastructureSettings, derived } from './llmclient/settings.js';
import { llmhostEnv } from './llmhost/env.js';
import { llmhostTasks } from './llmhost/index.js';
import { LLMHOST_DEFAULTS, type LlmhostSettings } from './llmhost/settings.js';
import { mcpclientTasks } from './mcpclient/index.js';
import { pluginTasks } from './plugin/index.js';
import { promptTasks } from './prompt/index.js';
import type { CredentialEnv } from './provider/env.js';
import { providerTasks } from './provider/index.js';
import { type VectorstoreOverrides, vectorstoreEnv } from './vectorstore/env.js';
import { vectorstoreTasks } from './vectorstore/index.js';

export interface SmarterTaskSettings extends Partial<InfrastructureSettings>, Partial<LlmhostSettings>, Partial<VectorstoreOverrides> {
  operationalQueue: string;
  infrastructureQueue: string;
  maxRetries: number;
  retryBackoff: boolean;
  /** Smarter's `fernet_encryption_key`, for the Secrets of MCPClients, providers, LLMHosts and vectorstores. */
  fernetEncryptionKey?: string;
  /** Where `<PROVIDER>_API_KEY` is looked up (the process environment unless a test passes its own). */
  environ?: (name: string) => string | undefined;
}

export function taskEnv(s: SmarterTaskSettings): TaskEnv {
  return {
    operationalQueue: s.operationalQueue,
    infrastructureQueue: s.infrastructureQueue,
    // Celery's defaults for the rest: retry_backoff_max 600 s, retry_jitter True.
    autoretry: { autoretryFor: 'all', maxRetries: s.maxRetries, retryBackoff: s.retryBackoff },
  };
}

/** Smarter's apps, each a folder `tasks/<app>/` whose `index.ts` lists its tasks. */
export function smarterTasks(s: SmarterTaskSettings): AnyTask<SmarterDeps>[] {
  const env = taskEnv(s);
  const infra = infraEnv(env, infrastructureSettings(s));
  const llmhost = llmhostEnv(infra, pick(LLMHOST_DEFAULTS, s), { fernetEncryptionKey: s.fernetEncryptionKey ?? '' });
  const credentials: CredentialEnv = { ...env, fernetEncryptionKey: s.fernetEncryptionKey ?? '', environ: s.environ ?? ((name) => process.env[name]) };
  return [
    ...promptTasks(env),
    ...pluginTasks(env),
    ...accountTasks(env),
    ...guardrailTasks(env),
    ...llmclientTasks(infra),
    ...llmhostTasks(llmhost),
    ...infrastructureTasks(llmhost),
    ...vectorstoreTasks(vectorstoreEnv(s, derived(infrastructureSettings(s)))),
    ...mcpclientTasks(env, credentials),
    ...providerTasks(credentials),
  ];
}

const infrastructureSettings = (s: SmarterTaskSettings): InfrastructureSettings => pick(INFRASTRUCTURE_DEFAULTS, s);

/** A group's settings: its defaults, overridden by whatever the loaded configuration sets. */
function pick<T extends object>(defaults: T, s: object): T {
  const out = { ...defaults };
  for (const k of Object.keys(out) as (keyof T)[]) {
    const v = (s as Record<string, unknown>)[k as string];
    if (v !== undefined) (out as Record<string, unknown>)[k as string] = v;
  }
  return out;
}
