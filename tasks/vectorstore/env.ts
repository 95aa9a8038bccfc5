/**
 * What the vectorstore tasks take from the task environment: the Kubernetes namespace of self-hosted servers,
 * the Fernet key of Smarter's Secrets, and the operator's explicit overrides of the credentials Smarter stores.
 */
import type { TaskContext } from '../../lib/registry/context.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import type { ServiceDeps } from './service.js';

export const serviceDeps = (env: TaskEnv, ctx: TaskContext<SmarterDeps>): ServiceDeps => ({
  db: ctx.deps.db,
  cloud: ctx.deps.cloud,
  namespace: env.namespace,
  platformName: env.platformName,
  fernetEncryptionKey: env.fernetEncryptionKey,
  overrides: env.overrides,
  logger: ctx.logger,
});
