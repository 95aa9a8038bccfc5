/** What the llmhost and inventory tasks share: the infrastructure tasks' environment plus the EKS settings. */
import type { InfraEnv } from '../llmclient/env.js';
import type { LlmhostSettings } from './settings.js';

export interface LlmhostEnv extends InfraEnv {
  llmhost: LlmhostSettings;
  /** Smarter's `fernet_encryption_key`: an LLMHost's Hugging Face token and API key are Smarter Secrets. */
  fernetEncryptionKey: string;
  /**
   * Whether active LLMHosts' health URLs are probed: Smarter's `HealthProber` probes only inside the cluster
   * (`KUBERNETES_SERVICE_HOST` set), the only place their Services answer.
   */
  healthProbes: boolean;
}

export const llmhostEnv = (infra: InfraEnv, llmhost: LlmhostSettings, o: { fernetEncryptionKey?: string; healthProbes?: boolean } = {}): LlmhostEnv => ({
  ...infra,
  llmhost,
  fernetEncryptionKey: o.fernetEncryptionKey ?? '',
  healthProbes: o.healthProbes ?? Boolean(process.env.KUBERNETES_SERVICE_HOST),
});
