/**
 * What the vectorstore tasks take from the task environment: the Kubernetes namespace of self-hosted servers,
 * the Fernet key of Smarter's Secrets, and the operator's explicit overrides of the credentials Smarter stores.
 */
import type { TaskContext } from '../../lib/registry/context.js';
import type { SmarterDeps, TaskEnv } from '../deps.js';
import type { ServiceDeps } from './service.js';

/** Each empty one is not set: the vectorstore's own ApiConnection, Secret or Provider is used. */
export interface VectorstoreOverrides {
  /** Sent to every Qdrant server instead of its own key. */
  qdrantApiKey: string;
  /** Every vectorstore's embeddings API, instead of its Provider's `base_url`. */
  embeddingsUrl: string;
  /** Instead of its Provider's API key. */
  embeddingsApiKey: string;
}

export const NO_OVERRIDES: VectorstoreOverrides = { qdrantApiKey: '', embeddingsUrl: '', embeddingsApiKey: '' };

export const serviceDeps = (env: TaskEnv, ctx: TaskContext<SmarterDeps>): ServiceDeps => ({
  db: ctx.deps.db,
  cloud: ctx.deps.cloud,
  namespace: env.namespace,
  platformName: env.platformName,
  fernetEncryptionKey: env.fernetEncryptionKey,
  overrides: env.overrides,
  logger: ctx.logger,
});
