/** Smarter's `plugin` app: `smarter.apps.plugin.tasks.*`, on the operational queue. */
import type { AnyTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { createPluginCharge } from './create-plugin-charge.js';
import { createPluginSelectorHistory } from './create-plugin-selector-history.js';

export const pluginTasks = (env: TaskEnv): AnyTask<SmarterDeps>[] => [
  createPluginSelectorHistory(env),
  createPluginCharge(env),
];
