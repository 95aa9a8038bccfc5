/** Smarter's `provider` app: `smarter.apps.provider.tasks.*`, on the operational queue. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps } from '../deps.js';
import type { CredentialEnv } from './env.js';
import { verifyProvider } from './verify-provider.js';
import { verifyProviderModel } from './verify-provider-model.js';

export const providerTasks = (credentials: CredentialEnv): AnyTask<SmarterDeps>[] => [verifyProviderModel(credentials), verifyProvider(credentials)];
