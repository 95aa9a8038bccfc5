/**
 * The single list of Smarter's tasks this worker runs. Each task declares its queue; `smarter-beat check`
 * and the test suite verify that every Beat entry names the queue its task declares.
 */
import type { AnyTask } from '../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from './deps.js';
import { aggregatePromptHistory } from './operational/aggregate-prompt-history.js';
import { aggregateRecords } from './operational/aggregate-records.js';
import { chargeLlmhostComputes } from './operational/charge-llmhost-computes.js';
import { createCharge } from './operational/create-charge.js';
import { createPrompt } from './operational/create-prompt.js';
import { evaluateBudgetConstraints } from './operational/evaluate-budget-constraints.js';
import { createLlmclientRequest } from './operational/llmclient-request.js';
import { createPluginCharge } from './operational/plugin-charge.js';
import { createPluginSelectorHistory } from './operational/plugin-selector-history.js';
import { createPromptHistory } from './operational/prompt-history.js';
import { createPromptPluginUsage } from './operational/prompt-plugin-usage.js';
import { createPromptToolCallHistory } from './operational/prompt-tool-call.js';
import { purgeGuardrailEvents } from './operational/purge-guardrail-events.js';
import { infraEnv } from './infrastructure/env.js';
import { refreshMcpclient } from './mcpclient/refresh-mcpclient.js';
import { refreshMcpclients } from './mcpclient/refresh-mcpclients.js';
import type { CredentialEnv } from './provider/env.js';
import { verifyProvider } from './provider/verify-provider.js';
import { verifyProviderModel } from './provider/verify-provider-model.js';
import { infrastructureTasks } from './infrastructure/index.js';
import { INFRASTRUCTURE_DEFAULTS, type InfrastructureSettings, derived } from './infrastructure/settings.js';
import { vectorstoreTasks } from './vectorstore/index.js';
import { llmhostEnv } from './llmhost/env.js';
import { llmhostTasks } from './llmhost/index.js';
import { LLMHOST_DEFAULTS, type LlmhostSettings } from './llmhost/settings.js';

export interface SmarterTaskSettings extends Partial<InfrastructureSettings>, Partial<LlmhostSettings> {
  operationalQueue: string;
  infrastructureQueue: string;
  maxRetries: number;
  retryBackoff: boolean;
  /** Smarter's `fernet_encryption_key`, for the Secrets of MCPClients and providers. */
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

export function smarterTasks(s: SmarterTaskSettings): AnyTask<SmarterDeps>[] {
  const env = taskEnv(s);
  return [
    createPromptHistory(env),
    aggregatePromptHistory(env),
    createPrompt(env),
    createPromptToolCallHistory(env),
    createPromptPluginUsage(env),
    createPluginSelectorHistory(env),
    createPluginCharge(env),
    createCharge(env),
    aggregateRecords(env),
    evaluateBudgetConstraints(env),
    createLlmclientRequest(env),
    chargeLlmhostComputes(env),
    purgeGuardrailEvents(env),
    ...infrastructureTasks(infraEnv(env, infrastructureSettings(s))),
    ...vectorstoreTasks({ operationalQueue: s.operationalQueue, infrastructureQueue: s.infrastructureQueue, namespace: derived(infrastructureSettings(s)).namespace }),
    ...llmhostTasks(llmhostEnv(infraEnv(env, infrastructureSettings(s)), pick(LLMHOST_DEFAULTS, s))),
    ...mcpAndProviderTasks(env, s),
  ];
}

function mcpAndProviderTasks(env: ReturnType<typeof taskEnv>, s: SmarterTaskSettings): AnyTask<SmarterDeps>[] {
  const c: CredentialEnv = { ...env, fernetEncryptionKey: s.fernetEncryptionKey ?? '', environ: s.environ ?? ((name) => process.env[name]) };
  return [refreshMcpclient(c), refreshMcpclients(env), verifyProviderModel(c), verifyProvider(c)];
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
