/** What the vectorstore tasks share: the two queues (documents on the operational one, databases on the infrastructure one) and the Kubernetes namespace of self-hosted servers. */
import type { TaskContext } from '../../lib/registry/context.js';
import type { SmarterDeps } from '../deps.js';
import type { ServiceDeps } from './service.js';

export interface VectorstoreEnv {
  operationalQueue: string;
  infrastructureQueue: string;
  /** `smarter_settings.environment_namespace`. */
  namespace: string;
}

export const serviceDeps = (env: VectorstoreEnv, ctx: TaskContext<SmarterDeps>): ServiceDeps => ({
  db: ctx.deps.db,
  cloud: ctx.deps.cloud,
  namespace: env.namespace,
  logger: ctx.logger,
});
