/** What the llmhost and inventory tasks share: the infrastructure tasks' environment plus the EKS settings. */
import type { InfraEnv } from '../llmclient/env.js';
import type { LlmhostSettings } from './settings.js';

export interface LlmhostEnv extends InfraEnv {
  llmhost: LlmhostSettings;
}

export const llmhostEnv = (infra: InfraEnv, llmhost: LlmhostSettings): LlmhostEnv => ({ ...infra, llmhost });
