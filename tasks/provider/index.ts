/** Smarter's `provider` app: `smarter.apps.provider.tasks.*`, on the operational queue. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { verifyProvider } from './verify-provider.js';
import { verifyProviderModel } from './verify-provider-model.js';

export const providerTasks = (env: TaskEnv): AnyTask<SmarterDeps>[] => [verifyProviderModel(env), verifyProvider(env)];
