/** Smarter's `infrastructure` app: `smarter.apps.infrastructure.tasks.*` (the inventory of cloud resources), on the infrastructure queue. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { syncInfrastructureInventory } from './sync-infrastructure-inventory.js';

export const infrastructureTasks = (env: TaskEnv): AnyTask<SmarterDeps>[] => [syncInfrastructureInventory(env)];
