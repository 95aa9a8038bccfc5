/** Smarter's `mcpclient` app: `smarter.apps.mcpclient.tasks.*`, on the operational queue. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { refreshMcpclient } from './refresh-mcpclient.js';
import { refreshMcpclients } from './refresh-mcpclients.js';

export const mcpclientTasks = (env: TaskEnv): AnyTask<SmarterDeps>[] => [refreshMcpclient(env), refreshMcpclients(env)];
