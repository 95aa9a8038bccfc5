/** Smarter's `mcpclient` app: `smarter.apps.mcpclient.tasks.*`, on the operational queue. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../deps.js';
import type { CredentialEnv } from '../provider/env.js';
import { refreshMcpclient } from './refresh-mcpclient.js';
import { refreshMcpclients } from './refresh-mcpclients.js';

export const mcpclientTasks = (env: TaskEnv, credentials: CredentialEnv): AnyTask<SmarterDeps>[] => [refreshMcpclient(credentials), refreshMcpclients(env)];
