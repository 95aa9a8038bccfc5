/**
 * What the vectorstore tasks share: the two queues (documents on the operational one, databases on the
 * infrastructure one), the Kubernetes namespace of self-hosted servers, the Fernet key of Smarter's Secrets,
 * and the operator's explicit overrides of the credentials Smarter stores.
 */
import type { TaskContext } from '../../lib/registry/context.js';
import type { SmarterDeps } from '../deps.js';
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

export interface VectorstoreEnv {
  operationalQueue: string;
  infrastructureQueue: string;
  /** `smarter_settings.environment_namespace`. */
  namespace: string;
  /** `smarter_settings.platform_name`: Pinecone's index tag `created_by` and backup description. */
  platformName: string;
  /** Smarter's `FERNET_ENCRYPTION_KEY`, to read the Secrets that hold the keys. */
  fernetEncryptionKey: string;
  overrides: VectorstoreOverrides;
}

/** From the worker's settings; `derived` is `smarter_settings`' namespace and platform name. */
export function vectorstoreEnv(
  s: { operationalQueue: string; infrastructureQueue: string; fernetEncryptionKey?: string } & Partial<VectorstoreOverrides>,
  derived: { namespace: string; platformName: string },
): VectorstoreEnv {
  return {
    operationalQueue: s.operationalQueue,
    infrastructureQueue: s.infrastructureQueue,
    namespace: derived.namespace,
    platformName: derived.platformName,
    fernetEncryptionKey: s.fernetEncryptionKey ?? '',
    overrides: { qdrantApiKey: s.qdrantApiKey ?? '', embeddingsUrl: s.embeddingsUrl ?? '', embeddingsApiKey: s.embeddingsApiKey ?? '' },
  };
}

export const serviceDeps = (env: VectorstoreEnv, ctx: TaskContext<SmarterDeps>): ServiceDeps => ({
  db: ctx.deps.db,
  cloud: ctx.deps.cloud,
  namespace: env.namespace,
  platformName: env.platformName,
  fernetEncryptionKey: env.fernetEncryptionKey,
  overrides: env.overrides,
  logger: ctx.logger,
});
