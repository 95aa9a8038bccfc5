/** `create_plugin_charge(*args, **kwargs)`: a no-op in Smarter (`pass`); registered so queued calls succeed as they do there. */
import * as z from 'zod';
import { defineTask } from '../../lib/registry/define-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';

export const createPluginCharge = (env: TaskEnv) =>
  defineTask<unknown, null, SmarterDeps>({
    name: 'smarter.apps.plugin.tasks.create_plugin_charge',
    queue: env.operationalQueue,
    retry: env.autoretry,
    varArgs: true,
    params: z.unknown(),
    run: () => null,
  });
